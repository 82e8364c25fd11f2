#include "chakra/format/et_io.h"
#include "chakra/format/wire.h"
#include "chakra/support/error.h"

namespace chakra {
namespace {

using wire::put_len;
using wire::put_tag;
using wire::put_varint;
using wire::varint_size;

// Encodes one scalar in its wire form (without tag) from the 64-bit storage form.
void put_scalar(std::string& out, AttrKind k, uint64_t bits, const Trace& t) {
  switch (k) {
    case AttrKind::Double:
    case AttrKind::Fixed64:
    case AttrKind::Sfixed64: wire::put_fixed64(out, bits); return;
    case AttrKind::Float:
    case AttrKind::Fixed32:
    case AttrKind::Sfixed32: wire::put_fixed32(out, static_cast<uint32_t>(bits)); return;
    case AttrKind::Uint32: put_varint(out, static_cast<uint32_t>(bits)); return;
    case AttrKind::Sint32: put_varint(out, wire::zigzag32(static_cast<int32_t>(bits))); return;
    case AttrKind::Sint64: put_varint(out, wire::zigzag64(static_cast<int64_t>(bits))); return;
    case AttrKind::Bool: put_varint(out, bits != 0); return;
    case AttrKind::String:
    case AttrKind::Bytes: {
      std::string_view s = t.str(static_cast<StrId>(bits));
      put_varint(out, s.size());
      out.append(s);
      return;
    }
    default:  // Int32 (stored sign-extended, written as 10 bytes when negative), Int64, Uint64
      put_varint(out, bits);
      return;
  }
}

// Reusable buffers, one per message nesting level.
struct Scratch {
  std::string node, attr, list, packed;
};

void put_attr_value(std::string& out, const AttrTable& table, uint32_t a, const Trace& t, Scratch& s) {
  const AttrKind k = table.kind(a);
  if (k == AttrKind::None) return;
  const uint32_t field = static_cast<uint32_t>(k);
  if (!is_list(k)) {
    put_tag(out, field, wire::scalar_wire_type(k));
    put_scalar(out, k, table.bits(a), t);
    return;
  }
  const AttrKind elem = element_kind(k);
  s.list.clear();
  if (is_text(elem)) {  // repeated string/bytes: one field per element
    for (uint64_t v : table.list(a)) {
      put_tag(s.list, 1, wire::kLen);
      put_scalar(s.list, elem, v, t);
    }
  } else if (!table.list(a).empty()) {  // numeric: packed
    s.packed.clear();
    for (uint64_t v : table.list(a)) put_scalar(s.packed, elem, v, t);
    put_len(s.list, 1, s.packed);
  }
  put_len(out, field, s.list);
}

void put_attrs(std::string& out, uint32_t field, const AttrTable& table, uint32_t begin, uint32_t end, const Trace& t,
               Scratch& s) {
  for (uint32_t a = begin; a < end; ++a) {
    s.attr.clear();
    if (StrId n = table.name(a)) put_len(s.attr, 1, t.str(n));
    if (StrId d = table.doc(a)) put_len(s.attr, 2, t.str(d));
    put_attr_value(s.attr, table, a, t, s);
    s.attr.append(table.unknown_fields(a));
    put_len(out, field, s.attr);
  }
}

void put_ids(std::string& out, uint32_t field, std::span<const uint64_t> ids, bool unpacked) {
  if (ids.empty()) return;
  if (unpacked) {
    for (uint64_t v : ids) {
      put_tag(out, field, wire::kVarint);
      put_varint(out, v);
    }
    return;
  }
  size_t n = 0;
  for (uint64_t v : ids) n += varint_size(v);
  put_tag(out, field, wire::kLen);
  put_varint(out, n);
  for (uint64_t v : ids) put_varint(out, v);
}

void put_io(std::string& out, uint32_t field, const IoStrings& io, const Trace& t) {
  const std::string_view parts[3] = {t.str(io.values), t.str(io.shapes), t.str(io.types)};
  size_t n = 0;
  for (std::string_view p : parts)
    if (!p.empty()) n += 1 + varint_size(p.size()) + p.size();
  put_tag(out, field, wire::kLen);
  put_varint(out, n);
  for (uint32_t i = 0; i < 3; ++i)
    if (!parts[i].empty()) put_len(out, i + 1, parts[i]);
}

void encode_node(std::string& out, const Trace& t, uint32_t n, Scratch& s) {
  if (uint64_t id = t.id(n)) {
    put_tag(out, 1, wire::kVarint);
    put_varint(out, id);
  }
  if (StrId name = t.name_id(n)) put_len(out, 2, t.str(name));
  if (int32_t type = t.type(n)) {
    put_tag(out, 3, wire::kVarint);
    put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(type)));  // enums sign-extend
  }
  put_ids(out, 4, t.ctrl_deps(n), t.ctrl_deps_unpacked(n));
  put_ids(out, 5, t.data_deps(n), t.data_deps_unpacked(n));
  if (uint64_t v = t.start_time_micros(n)) {
    put_tag(out, 6, wire::kVarint);
    put_varint(out, v);
  }
  if (uint64_t v = t.duration_micros(n)) {
    put_tag(out, 7, wire::kVarint);
    put_varint(out, v);
  }
  if (t.has_inputs(n)) put_io(out, 8, t.inputs(n), t);
  if (t.has_outputs(n)) put_io(out, 9, t.outputs(n), t);
  put_attrs(out, 10, t.node_attrs(), t.attr_begin(n), t.attr_end(n), t, s);
  out.append(t.unknown_fields(n));
}

void put_record(ByteSink& sink, std::string& prefix, const std::string& body) {
  prefix.clear();
  put_varint(prefix, body.size());
  sink.write(prefix);
  sink.write(body);
}

}  // namespace

void write_et(const Trace& t, ByteSink& sink, Progress* progress) {
  Scratch s;
  std::string prefix;
  if (t.has_metadata()) {
    s.node.clear();
    if (!t.metadata_version().empty()) put_len(s.node, 1, t.metadata_version());
    put_attrs(s.node, 2, t.metadata_attrs(), 0, t.metadata_attrs().size(), t, s);
    s.node.append(t.metadata_unknown_fields());
    put_record(sink, prefix, s.node);
  }
  for (uint32_t n = 0; n < t.size(); ++n) {
    s.node.clear();
    encode_node(s.node, t, n, s);
    put_record(sink, prefix, s.node);
    if ((n & 0xffff) == 0xffff) report_progress(progress, "writing", n, t.size());
  }
}

void write_et(const Trace& trace, const std::string& path, const WriteOptions& options) {
  OutputFile out(path, options.compression);
  write_et(trace, out, options.progress);
  out.commit();
}

std::string encode_et(const Trace& trace) {
  StringSink sink;
  write_et(trace, sink);
  return std::move(sink.out);
}

}  // namespace chakra
