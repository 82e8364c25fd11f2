#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "chakra/format/et_io.h"
#include "chakra/format/wire.h"
#include "chakra/support/error.h"

namespace chakra {
namespace {

using wire::DecodeError;
using wire::read_len;
using wire::read_varint;

// Field numbers of Node, IOInfo, AttributeProto, GlobalMetadata (core/proto/et_def.proto).
enum NodeField : uint32_t {
  kNodeId = 1,
  kNodeName = 2,
  kNodeType = 3,
  kNodeCtrlDeps = 4,
  kNodeDataDeps = 5,
  kNodeStart = 6,
  kNodeDuration = 7,
  kNodeInputs = 8,
  kNodeOutputs = 9,
  kNodeAttr = 10,
};
enum AttrField : uint32_t { kAttrName = 1, kAttrDoc = 2 };
enum MetaField : uint32_t { kMetaVersion = 1, kMetaAttr = 2 };

// Decodes one scalar of kind k into its 64-bit storage form (see trace.h).
uint64_t read_scalar(AttrKind k, const uint8_t*& p, const uint8_t* end, StringPool& pool) {
  switch (k) {
    case AttrKind::Double:
    case AttrKind::Fixed64:
    case AttrKind::Sfixed64: return wire::read_fixed64(p, end);
    case AttrKind::Float:
    case AttrKind::Fixed32: return wire::read_fixed32(p, end);
    case AttrKind::Sfixed32:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(wire::read_fixed32(p, end))));
    case AttrKind::Int32:  // protobuf truncates to 32 bits, then sign-extends
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(read_varint(p, end))));
    case AttrKind::Uint32: return static_cast<uint32_t>(read_varint(p, end));
    case AttrKind::Sint32:
      return static_cast<uint64_t>(static_cast<int64_t>(wire::unzigzag32(static_cast<uint32_t>(read_varint(p, end)))));
    case AttrKind::Sint64: return static_cast<uint64_t>(wire::unzigzag64(read_varint(p, end)));
    case AttrKind::Bool: return read_varint(p, end) != 0 ? 1 : 0;
    case AttrKind::String:
    case AttrKind::Bytes: return pool.intern(read_len(p, end));
    default:  // Int64, Uint64
      return read_varint(p, end);
  }
}

// Appends the elements of a <T>List message to drafts.elems. Unknown fields inside are counted.
void parse_list(std::string_view msg, AttrKind list, AttrDrafts& drafts, StringPool& pool, uint64_t& dropped) {
  const AttrKind elem = element_kind(list);
  const wire::WireType elem_wt = wire::scalar_wire_type(elem);
  auto* p = reinterpret_cast<const uint8_t*>(msg.data());
  const uint8_t* end = p + msg.size();
  while (p < end) {
    uint64_t key = read_varint(p, end);
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
    if (field == 0) throw DecodeError{"field number 0", p};
    if (field == 1 && wt == elem_wt) {
      drafts.elems.push_back(read_scalar(elem, p, end, pool));
    } else if (field == 1 && wt == wire::kLen && elem_wt != wire::kLen) {  // packed
      std::string_view packed = read_len(p, end);
      auto* q = reinterpret_cast<const uint8_t*>(packed.data());
      const uint8_t* qend = q + packed.size();
      while (q < qend) drafts.elems.push_back(read_scalar(elem, q, qend, pool));
    } else {
      wire::skip_value(wt, field, p, end);
      ++dropped;
    }
  }
}

// The name interned at each attribute position of the previous node: nodes of a trace mostly
// list the same attributes in the same order, so a node's names are usually found by comparing
// bytes, without hashing (StringPool::intern with a hint).
using AttrNameHints = std::array<StrId, 16>;

void parse_attr(std::string_view msg, AttrDrafts& drafts, StringPool& pool, uint64_t& dropped,
                AttrNameHints* hints = nullptr) {
  AttrDraft a;
  a.list_begin = static_cast<uint32_t>(drafts.elems.size());
  a.unknown_begin = static_cast<uint32_t>(drafts.unknown.size());
  auto* p = reinterpret_cast<const uint8_t*>(msg.data());
  const uint8_t* end = p + msg.size();
  while (p < end) {
    const uint8_t* field_start = p;
    uint64_t key = read_varint(p, end);
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
    if (field == 0) throw DecodeError{"field number 0", field_start};
    if (field == kAttrName && wt == wire::kLen) {
      const size_t position = drafts.attrs.size();
      a.name = hints && position < hints->size() ? pool.intern(read_len(p, end), (*hints)[position])
                                                 : pool.intern(read_len(p, end));
      continue;
    }
    if (field == kAttrDoc && wt == wire::kLen) {
      a.doc = pool.intern(read_len(p, end));
      continue;
    }
    if (field >= 3 && field <= static_cast<uint32_t>(kMaxAttrKind)) {
      const AttrKind k = static_cast<AttrKind>(field);
      const bool list = is_list(k);
      if (list ? wt == wire::kLen : wt == wire::scalar_wire_type(k)) {
        // Setting a oneof member discards the previous one; a repeated list message merges.
        if (a.kind != k) {
          drafts.elems.resize(a.list_begin);
          a.list_len = 0;
        }
        a.kind = k;
        if (list) {
          parse_list(read_len(p, end), k, drafts, pool, dropped);
          a.list_len = static_cast<uint32_t>(drafts.elems.size() - a.list_begin);
          a.bits = 0;
        } else {
          a.bits = read_scalar(k, p, end, pool);
        }
        continue;
      }
    }
    wire::skip_value(wt, field, p, end);
    drafts.unknown.append(reinterpret_cast<const char*>(field_start), p - field_start);
  }
  a.unknown_len = static_cast<uint32_t>(drafts.unknown.size() - a.unknown_begin);
  drafts.attrs.push_back(a);
}

void parse_io(std::string_view msg, IoStrings& io, StringPool& pool, uint64_t& dropped) {
  auto* p = reinterpret_cast<const uint8_t*>(msg.data());
  const uint8_t* end = p + msg.size();
  while (p < end) {
    uint64_t key = read_varint(p, end);
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
    if (field == 0) throw DecodeError{"field number 0", p};
    if (wt == wire::kLen && field >= 1 && field <= 3) {
      StrId s = pool.intern(read_len(p, end));
      (field == 1 ? io.values : field == 2 ? io.shapes : io.types) = s;
    } else {
      wire::skip_value(wt, field, p, end);
      ++dropped;
    }
  }
}

void read_deps(uint32_t wt, const uint8_t*& p, const uint8_t* end, std::vector<uint64_t>& out, bool& unpacked) {
  if (wt == wire::kVarint) {
    out.push_back(read_varint(p, end));
    unpacked = true;
    return;
  }
  std::string_view packed = read_len(p, end);
  auto* q = reinterpret_cast<const uint8_t*>(packed.data());
  const uint8_t* qend = q + packed.size();
  while (q < qend) out.push_back(read_varint(q, qend));
}

void parse_node(const uint8_t* p, const uint8_t* end, NodeDraft& d, StringPool& pool, uint64_t& dropped,
                AttrNameHints& hints) {
  d.clear();
  while (p < end) {
    const uint8_t* field_start = p;
    uint64_t key = read_varint(p, end);
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
    if (field == 0) throw DecodeError{"field number 0", field_start};
    bool known = true;
    switch (field) {
      case kNodeId:
        if (wt == wire::kVarint)
          d.id = read_varint(p, end);
        else
          known = false;
        break;
      case kNodeName:
        if (wt == wire::kLen)
          d.name = pool.intern(read_len(p, end));
        else
          known = false;
        break;
      case kNodeType:
        if (wt == wire::kVarint)
          d.type = static_cast<int32_t>(read_varint(p, end));
        else
          known = false;
        break;
      case kNodeCtrlDeps:
      case kNodeDataDeps:
        if (wt == wire::kVarint || wt == wire::kLen)
          read_deps(wt, p, end, field == kNodeCtrlDeps ? d.ctrl_deps : d.data_deps,
                    field == kNodeCtrlDeps ? d.ctrl_deps_unpacked : d.data_deps_unpacked);
        else
          known = false;
        break;
      case kNodeStart:
        if (wt == wire::kVarint)
          d.start_time_micros = read_varint(p, end);
        else
          known = false;
        break;
      case kNodeDuration:
        if (wt == wire::kVarint)
          d.duration_micros = read_varint(p, end);
        else
          known = false;
        break;
      case kNodeInputs:
      case kNodeOutputs:
        if (wt == wire::kLen) {
          bool in = field == kNodeInputs;
          (in ? d.has_inputs : d.has_outputs) = true;
          parse_io(read_len(p, end), in ? d.inputs : d.outputs, pool, dropped);
        } else {
          known = false;
        }
        break;
      case kNodeAttr:
        if (wt == wire::kLen)
          parse_attr(read_len(p, end), d.attrs, pool, dropped, &hints);
        else
          known = false;
        break;
      default: known = false;
    }
    if (!known) {
      wire::skip_value(wt, field, p, end);
      d.unknown.append(reinterpret_cast<const char*>(field_start), p - field_start);
    }
  }
}

void parse_metadata(const uint8_t* p, const uint8_t* end, Trace& trace, uint64_t& dropped) {
  AttrDrafts attrs;
  std::string unknown;
  StrId version = StringPool::kEmpty;
  while (p < end) {
    const uint8_t* field_start = p;
    uint64_t key = read_varint(p, end);
    uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
    if (field == 0) throw DecodeError{"field number 0", field_start};
    if (field == kMetaVersion && wt == wire::kLen) {
      version = trace.intern(read_len(p, end));
    } else if (field == kMetaAttr && wt == wire::kLen) {
      parse_attr(read_len(p, end), attrs, trace.strings(), dropped);
    } else {
      wire::skip_value(wt, field, p, end);
      unknown.append(reinterpret_cast<const char*>(field_start), p - field_start);
    }
  }
  trace.set_metadata(version, attrs, unknown);
}

// Is this first record a GlobalMetadata (fields: 1 version string, 2 repeated attribute) rather
// than a Node? The first telling field decides: field 1 is a string in GlobalMetadata but a varint
// (id) in a Node, fields 3..10 exist only in a Node. Field 2 is ambiguous (Node.name or
// GlobalMetadata.attr): an attribute message starts with its name field (0x0a), a node name
// practically never with a newline. Other field numbers are unknown to both and say nothing.
bool looks_like_metadata(const uint8_t* p, const uint8_t* end) {
  try {
    while (p < end) {
      uint64_t key = read_varint(p, end);
      uint32_t field = static_cast<uint32_t>(key >> 3), wt = static_cast<uint32_t>(key & 7);
      if (field == kMetaVersion) return wt == wire::kLen;
      if (field >= kNodeType && field <= kNodeAttr) return false;
      if (field == kMetaAttr) {
        if (wt != wire::kLen) return false;
        std::string_view payload = read_len(p, end);
        if (payload.empty() || payload[0] != 0x0a) return false;
        continue;
      }
      wire::skip_value(wt, field, p, end);
    }
    return true;
  } catch (const DecodeError&) {
    return false;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct EtReader::Impl {
  std::unique_ptr<ByteSource> in;
  ReadOptions opt;
  std::vector<uint8_t> buf;
  const uint8_t* mapped = nullptr;  // the whole input in place, read without copying, or null
  uint64_t mapped_from = 0;         // the source's position where `mapped` begins
  size_t lo = 0, hi = 0;            // unread bytes are data()[lo, hi)
  uint64_t base = 0;                // stream offset of data()[0]
  const uint8_t* data() const { return mapped ? mapped : buf.data(); }
  uint64_t records = 0;
  bool metadata_done = false;
  bool has_metadata = false;
  // Record 0 when it turned out to be a Node: kept in buf until next_node() takes it.
  bool pending = false;
  size_t pending_lo = 0, pending_hi = 0;
  uint64_t pending_offset = 0;
  uint64_t dropped = 0;
  uint64_t next_progress = 0;
  AttrNameHints attr_name_hints{};  // ids in whichever pool the caller passes: checked before use

  // Makes at least n unread bytes available; false if the input ends first.
  bool fill(size_t n) {
    if (hi - lo >= n || mapped) return hi - lo >= n;
    if (lo > 0) {
      std::memmove(buf.data(), buf.data() + lo, hi - lo);
      base += lo;
      hi -= lo;
      lo = 0;
    }
    if (buf.size() < n) buf.resize(std::max(n, buf.size() * 2));
    // A 0 is the end for now, not for good: a PieceSource's file may still be arriving.
    while (hi < n) {
      const size_t got = in->read(buf.data() + hi, buf.size() - hi);
      if (got == 0) break;
      hi += got;
    }
    return hi - lo >= n;
  }

  std::string head;  // the input's first bytes, to say what a file that is no trace is

  // For a first record that does not decode: what the file is instead, when it is JSON text
  // (the commonest mistake: a PyTorch trace, or our own JSON, given to an .et reader).
  std::string hint() const {
    if (records != 1) return "";
    size_t i = head.find_first_not_of(" \t\r\n");
    if (i == std::string::npos || (head[i] != '{' && head[i] != '[')) return "";
    return "; this is JSON text, not a Chakra .et (protobuf) trace: a PyTorch host execution trace is "
           "converted with `chakra convert pytorch` (after `chakra link` with its Kineto trace), and Chakra "
           "JSON goes back to .et with `chakra dejsonize`";
  }

  // Names the record being decoded (records counts from 1 once it has been located).
  std::string where(uint64_t offset) const {
    return in->name() + ": record " + std::to_string(records) + " at byte " + std::to_string(offset) +
           (in->compressed() ? " (of the decompressed data)" : "");
  }

  // Locates the next record; false at the end of the input.
  bool next_record(const uint8_t*& b, const uint8_t*& e, uint64_t& offset) {
    if (!fill(1)) return false;
    offset = base + lo;
    ++records;
    fill(10);
    if (records == 1) head.assign(reinterpret_cast<const char*>(data() + lo), std::min<size_t>(hi - lo, 16));
    const uint8_t* p = data() + lo;
    uint64_t len;
    try {
      len = read_varint(p, data() + hi);
    } catch (const DecodeError& err) {
      throw Error(where(offset) + ": bad length prefix: " + err.what + hint());
    }
    const size_t prefix = static_cast<size_t>(p - (data() + lo));
    const uint64_t left = in->raw_size() > offset + prefix ? in->raw_size() - offset - prefix : 0;
    if (!in->compressed() && in->raw_size() && len > left)
      throw Error(where(offset) + ": record length " + std::to_string(len) + " exceeds the " + std::to_string(left) +
                  " bytes left in the file (truncated, or not a Chakra trace)" + hint());
    if (len > opt.max_record_bytes)
      throw Error(where(offset) + ": record length " + std::to_string(len) + " exceeds the limit of " +
                  std::to_string(opt.max_record_bytes) + " bytes per record (not a Chakra trace?)" + hint());
    if (!fill(prefix + static_cast<size_t>(len)))
      throw Error(where(offset) + ": record of " + std::to_string(len) + " bytes is cut off after " +
                  std::to_string(hi - lo - prefix) + " bytes (truncated file?)" + hint());
    b = data() + lo + prefix;
    e = b + len;
    lo += prefix + static_cast<size_t>(len);
    if (opt.max_nodes && records > opt.max_nodes + 1)
      throw Error(in->name() + ": more than " + std::to_string(opt.max_nodes) + " nodes (limit)");
    if (opt.progress && base + lo >= next_progress) {
      next_progress = base + lo + (8u << 20);
      report_progress(opt.progress, "reading " + in->name(), mapped ? mapped_from + lo : in->raw_position(),
                      in->raw_size());
    }
    return true;
  }

  [[noreturn]] void decode_failed(const DecodeError& err, const uint8_t* rec_begin, uint64_t offset, const char* what) {
    throw Error(where(offset) + ": malformed " + what + ": " + err.what + " (at byte " +
                std::to_string(offset + (err.at - rec_begin)) + ")" + hint());
  }
};

EtReader::EtReader(std::unique_ptr<ByteSource> in, const ReadOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->in = std::move(in);
  impl_->opt = options;
  // 128 KiB at most (streaming readers keep a small footprint; larger reads gain nothing);
  // less for a small uncompressed file (simulators open thousands).
  size_t size = 128 << 10;
  ByteSource& src = *impl_->in;
  if (!src.compressed() && src.raw_size() > src.raw_position()) {
    const uint64_t left = src.raw_size() - src.raw_position();
    // A small input that can be shown in place (bytes in memory, a regular file) is read
    // there: a simulator holds thousands of traces in memory, and a copy would double them.
    std::string_view whole;
    if (left <= (64u << 20) && src.map(0, static_cast<size_t>(left), whole) && whole.size() == left) {
      impl_->mapped = reinterpret_cast<const uint8_t*>(whole.data());
      impl_->mapped_from = src.raw_position();
      impl_->hi = whole.size();
      return;
    }
    size = std::min<size_t>(size, std::max<uint64_t>(left + 16, 4096));
  }
  impl_->buf.resize(size);
}

EtReader::~EtReader() = default;

void EtReader::read_metadata(Trace& trace) {
  Impl& s = *impl_;
  if (s.metadata_done) return;
  s.metadata_done = true;
  const uint8_t *b, *e;
  uint64_t offset;
  if (!s.next_record(b, e, offset))
    throw Error(s.in->name() + ": empty " + (s.in->compressed() ? "gzip content" : "file") +
                " (0 bytes): not a Chakra trace");
  switch (s.opt.metadata) {
    case MetadataMode::Present: s.has_metadata = true; break;
    case MetadataMode::Absent: s.has_metadata = false; break;
    case MetadataMode::Auto: s.has_metadata = looks_like_metadata(b, e); break;
  }
  if (s.has_metadata) {
    try {
      parse_metadata(b, e, trace, s.dropped);
    } catch (const DecodeError& err) {
      s.decode_failed(err, b, offset, "GlobalMetadata record");
    }
  } else {
    trace.clear_metadata();
    s.pending = true;
    s.pending_lo = static_cast<size_t>(b - s.data());
    s.pending_hi = static_cast<size_t>(e - s.data());
    s.pending_offset = offset;
  }
}

bool EtReader::next_node(Trace& strings, NodeDraft& node) {
  Impl& s = *impl_;
  if (!s.metadata_done) read_metadata(strings);
  const uint8_t *b, *e;
  uint64_t offset;
  if (s.pending) {
    s.pending = false;
    b = s.data() + s.pending_lo;
    e = s.data() + s.pending_hi;
    offset = s.pending_offset;
  } else if (!s.next_record(b, e, offset)) {
    strings.add_dropped_unknown_fields(s.dropped);
    s.dropped = 0;
    return false;
  }
  try {
    parse_node(b, e, node, strings.strings(), s.dropped, s.attr_name_hints);
  } catch (const DecodeError& err) {
    s.decode_failed(err, b, offset, "Node record");
  }
  return true;
}

bool EtReader::has_metadata() const { return impl_->has_metadata; }
uint64_t EtReader::records_read() const { return impl_->records; }
uint64_t EtReader::offset() const { return impl_->base + impl_->lo; }
const std::string& EtReader::name() const { return impl_->in->name(); }

Trace read_et(std::unique_ptr<ByteSource> in, const ReadOptions& options) {
  Trace trace;
  EtReader reader(std::move(in), options);
  reader.read_metadata(trace);
  NodeDraft node;
  while (reader.next_node(trace, node)) trace.append(node);
  return trace;
}

Trace read_et(const std::string& path, const ReadOptions& options) {
  return read_et(open_input(path, options.input), options);
}

namespace {

// One field of a message: its bytes (tag included) and, for a length-delimited one, its payload.
struct RawField {
  uint64_t key;
  std::string_view bytes, payload;
};
RawField next_field(const uint8_t*& p, const uint8_t* end) {
  const uint8_t* start = p;
  RawField f{read_varint(p, end), {}, {}};
  const auto wt = static_cast<uint32_t>(f.key & 7), field = static_cast<uint32_t>(f.key >> 3);
  if (wt == wire::kLen) {
    f.payload = read_len(p, end);
  } else {
    wire::skip_value(wt, field, p, end);
  }
  f.bytes = std::string_view(reinterpret_cast<const char*>(start), static_cast<size_t>(p - start));
  return f;
}
const uint8_t* bytes_of(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// The name of an AttributeProto, its first field (as every writer puts it), else nullopt.
std::optional<std::string_view> attr_name(std::string_view attr) {
  const uint8_t *p = bytes_of(attr), *end = p + attr.size();
  if (p == end) return std::nullopt;
  const RawField f = next_field(p, end);
  if (f.key != ((uint64_t{kAttrName} << 3) | wire::kLen)) return std::nullopt;
  return f.payload;
}

// The value of an AttributeProto that is a name and one string, int32 or int64 value, else
// nullopt.
std::optional<EncodedScalar> scalar_value(std::string_view attr) {
  const uint8_t *p = bytes_of(attr), *end = p + attr.size();
  next_field(p, end);  // the name
  if (p == end) return std::nullopt;
  const RawField f = next_field(p, end);
  if (p != end) return std::nullopt;
  const uint8_t* v = bytes_of(f.bytes) + wire::varint_size(f.key);
  switch (f.key) {
    case (uint64_t(AttrKind::String) << 3) | wire::kLen: return f.payload;
    case (uint64_t(AttrKind::Int32) << 3) | wire::kVarint: return int64_t(int32_t(uint32_t(read_varint(v, end))));
    case (uint64_t(AttrKind::Int64) << 3) | wire::kVarint: return int64_t(read_varint(v, end));
    default: return std::nullopt;
  }
}

}  // namespace

bool same_records_but_paired(
    std::string_view a, std::string_view b, std::span<const std::string_view> paired,
    const std::function<bool(std::string_view, const EncodedScalar&, const EncodedScalar&)>& pair) {
  if (is_gzip({bytes_of(a), a.size()}) || is_gzip({bytes_of(b), b.size()})) return false;
  constexpr uint64_t kAttrKey = (uint64_t{kNodeAttr} << 3) | wire::kLen;
  try {
    const uint8_t *pa = bytes_of(a), *ea = pa + a.size(), *pb = bytes_of(b), *eb = pb + b.size();
    for (bool first = true; pa < ea && pb < eb; first = false) {
      const std::string_view ra = read_len(pa, ea), rb = read_len(pb, eb);
      // Field by field (identical records too: every paired value is told, as the comparison of
      // decoded traces tells it). Record 0 may be a GlobalMetadata, whose attributes are
      // compared, not paired: it must be the same and have no node attribute.
      const uint8_t *fa = bytes_of(ra), *fea = fa + ra.size(), *fb = bytes_of(rb), *feb = fb + rb.size();
      if (first && ra != rb) return false;
      // The same bytes and no paired name in them: nothing to tell (most records).
      if (!first && ra == rb &&
          std::none_of(paired.begin(), paired.end(), [&](std::string_view name) { return ra.find(name) != ra.npos; }))
        continue;
      while (fa < fea && fb < feb) {
        const RawField x = next_field(fa, fea), y = next_field(fb, feb);
        if (x.key == kAttrKey) {
          if (first) return false;
          const auto name = attr_name(x.payload);
          if (!name) return false;
          if (std::find(paired.begin(), paired.end(), *name) != paired.end()) {
            const auto u = scalar_value(x.payload);
            const auto v = y.key == kAttrKey && attr_name(y.payload) == name ? scalar_value(y.payload) : std::nullopt;
            if (!u || !v || !pair(*name, *u, *v)) return false;
            continue;
          }
        }
        if (x.bytes != y.bytes) return false;
      }
      if (fa != fea || fb != feb) return false;
    }
    return pa == ea && pb == eb;
  } catch (const DecodeError&) {
    return false;
  }
}

}  // namespace chakra
