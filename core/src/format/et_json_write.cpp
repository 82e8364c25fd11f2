#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/text.h"

namespace chakra {
namespace {

// Differences between our JSON and the reference jsonizer's protobuf JSON.
struct Flavor {
  bool reference;  // 64-bit integers as strings; id/name/type left out at their defaults
};

// Per string id of the trace being written: 0 not seen yet, 1 needs no escaping, 2 does.
// Strings repeat across nodes (names, attribute names, operand lists), so each is scanned once.
using PlainCache = std::vector<uint8_t>;

class NodeJson {
 public:
  NodeJson(const Trace& t, JsonWriter& w, Flavor f, PlainCache& plain) : t_(t), w_(w), f_(f), plain_(plain) {}

  void metadata() {
    w_.begin_object();
    if (!t_.metadata_version().empty()) w_.key("version").value(t_.metadata_version());
    attrs(t_.metadata_attrs(), 0, t_.metadata_attrs().size());
    w_.end_object();
  }

  void node(uint32_t n) {
    w_.begin_object();
    if (t_.id(n) || !f_.reference) {
      w_.key("id");
      u64(t_.id(n));
    }
    if (t_.name_id(n) || !f_.reference) {
      w_.key("name");
      str(t_.name_id(n));
    }
    if (t_.type(n) || !f_.reference) {
      w_.key("type");
      std::string_view type = node_type_name(t_.type(n));
      if (type.empty())
        w_.value_int(t_.type(n));
      else
        w_.value(type);
    }
    ids("ctrlDeps", t_.ctrl_deps(n));
    ids("dataDeps", t_.data_deps(n));
    if (t_.start_time_micros(n)) {
      w_.key("startTimeMicros");
      u64(t_.start_time_micros(n));
    }
    if (t_.duration_micros(n)) {
      w_.key("durationMicros");
      u64(t_.duration_micros(n));
    }
    if (t_.has_inputs(n)) io("inputs", t_.inputs(n));
    if (t_.has_outputs(n)) io("outputs", t_.outputs(n));
    attrs(t_.node_attrs(), t_.attr_begin(n), t_.attr_end(n));
    w_.end_object();
  }

 private:
  void str(StrId id) {
    if (id >= plain_.size()) plain_.resize(std::max<size_t>(id + 1, plain_.size() * 2), 0);
    const std::string_view s = t_.str(id);
    if (plain_[id] == 0) plain_[id] = json_plain_prefix(s) == s.size() ? 1 : 2;
    if (plain_[id] == 1)
      w_.value_plain(s);
    else
      w_.value(s);
  }

  // Protobuf JSON writes 64-bit integers as strings (digits need no escaping).
  void u64(uint64_t v) {
    if (f_.reference) {
      scratch_.assign(1, '"');
      append_uint(scratch_, v);
      scratch_ += '"';
      w_.value_raw(scratch_);
    } else {
      w_.value_uint(v);
    }
  }
  void i64(int64_t v) {
    if (f_.reference) {
      scratch_.assign(1, '"');
      append_int(scratch_, v);
      scratch_ += '"';
      w_.value_raw(scratch_);
    } else {
      w_.value_int(v);
    }
  }

  void ids(std::string_view key, std::span<const uint64_t> list) {
    if (list.empty()) return;
    w_.key(key).begin_array();
    for (uint64_t v : list) u64(v);
    w_.end_array();
  }

  void io(std::string_view key, const IoStrings& s) {
    w_.key(key).begin_object();
    if (s.values) {
      w_.key("values");
      str(s.values);
    }
    if (s.shapes) {
      w_.key("shapes");
      str(s.shapes);
    }
    if (s.types) {
      w_.key("types");
      str(s.types);
    }
    w_.end_object();
  }

  void scalar(AttrKind k, uint64_t bits) {
    switch (k) {
      case AttrKind::Double: w_.value_double(double_of_bits(bits)); return;
      case AttrKind::Float: w_.value_double(shortest_float32(float_of_bits(bits))); return;
      case AttrKind::Int32:
      case AttrKind::Sint32:
      case AttrKind::Sfixed32: w_.value_int(static_cast<int64_t>(bits)); return;
      case AttrKind::Uint32:
      case AttrKind::Fixed32: w_.value_uint(bits); return;
      case AttrKind::Int64:
      case AttrKind::Sint64:
      case AttrKind::Sfixed64: i64(static_cast<int64_t>(bits)); return;
      case AttrKind::Uint64:
      case AttrKind::Fixed64: u64(bits); return;
      case AttrKind::Bool: w_.value(bits != 0); return;
      case AttrKind::String: str(static_cast<StrId>(bits)); return;
      case AttrKind::Bytes:
        scratch_.clear();
        append_base64(scratch_, t_.str(static_cast<StrId>(bits)));
        w_.value(scratch_);
        return;
      default: return;
    }
  }

  void attrs(const AttrTable& table, uint32_t begin, uint32_t end) {
    if (begin == end) return;
    w_.key("attr").begin_array();
    for (uint32_t a = begin; a < end; ++a) {
      w_.begin_object();
      if (table.name(a) || !f_.reference) {
        w_.key("name");
        str(table.name(a));
      }
      if (table.doc(a)) {
        w_.key("docString");
        str(table.doc(a));
      }
      const AttrKind k = table.kind(a);
      if (k != AttrKind::None) {
        w_.key(attr_kind_json_name(k));
        if (is_list(k)) {
          w_.begin_object();
          auto values = table.list(a);
          if (!values.empty()) {  // an empty list message prints as {}
            w_.key("values").begin_array();
            for (uint64_t v : values) scalar(element_kind(k), v);
            w_.end_array();
          }
          w_.end_object();
        } else {
          scalar(k, table.bits(a));
        }
      }
      w_.end_object();
    }
    w_.end_array();
  }

  const Trace& t_;
  JsonWriter& w_;
  Flavor f_;
  PlainCache& plain_;
  std::string scratch_;
};

// The document around the nodes, per format. Nodes are written one at a time so the same code
// serves whole traces and streams.
class Document {
 public:
  Document(ByteSink& out, const JsonOptions& options) : format_(options.format), w_(out, style(options)) {}

  // `t` supplies the metadata; nodes may come from it or from other traces (forget_strings()).
  void begin(const Trace& t) {
    NodeJson j(t, w_, flavor(), plain_);
    switch (format_) {
      case JsonFormat::Reference:
        if (t.has_metadata()) j.metadata();
        break;
      case JsonFormat::Jsonl:
        if (t.has_metadata()) {
          w_.begin_object().key("globalMetadata");
          j.metadata();
          w_.end_object();
          w_.raw("\n");
        }
        break;
      case JsonFormat::Json:
        w_.begin_object();
        if (t.has_metadata()) {
          w_.key("globalMetadata");
          j.metadata();
        }
        w_.key("nodes").begin_array();
        break;
    }
  }
  void node(const Trace& t, uint32_t n) {
    NodeJson(t, w_, flavor(), plain_).node(n);
    if (format_ == JsonFormat::Jsonl) w_.raw("\n");
  }
  // String ids are cached per trace: call this before nodes from another string pool.
  void forget_strings() { plain_.clear(); }
  void end() {
    if (format_ == JsonFormat::Json) {
      w_.end_array().end_object();
      w_.raw("\n");
    }
    w_.flush();
  }

 private:
  static JsonStyle style(const JsonOptions& o) {
    switch (o.format) {
      case JsonFormat::Reference: return JsonStyle::python_indent(2, /*ascii_only=*/true);
      case JsonFormat::Jsonl: return JsonStyle::python_line();
      case JsonFormat::Json: break;
    }
    return o.compact ? JsonStyle::compact() : JsonStyle::python_indent(2, false);
  }
  Flavor flavor() const { return {format_ == JsonFormat::Reference}; }

  JsonFormat format_;
  JsonWriter w_;
  PlainCache plain_;
};

}  // namespace

void write_json(const Trace& t, ByteSink& out, const JsonOptions& options) {
  Document doc(out, options);
  doc.begin(t);
  for (uint32_t n = 0; n < t.size(); ++n) {
    doc.node(t, n);
    if ((n & 0xffff) == 0xffff) report_progress(options.progress, "writing JSON", n, t.size());
  }
  doc.end();
}

JsonizeStats jsonize_et(std::unique_ptr<ByteSource> in, ByteSink& out, const JsonOptions& options, ReadOptions read) {
  // Node strings go to a pool of their own that starts afresh whenever it passes this size, so
  // memory stays flat however many distinct strings a trace has (below Column's mapped-block
  // size, so it never takes a huge page).
  constexpr size_t kStringWindowBytes = 128 << 10;
  read.progress = options.progress;  // the reader reports how far through the input it is
  EtReader reader(std::move(in), read);
  Trace metadata;
  reader.read_metadata(metadata);
  Document doc(out, options);
  doc.begin(metadata);
  JsonizeStats stats;
  stats.has_metadata = metadata.has_metadata();
  stats.unknown_fields = metadata.has_unknown_fields();
  Trace window;  // the current node and the strings seen since the pool last started afresh
  doc.forget_strings();
  NodeDraft node;
  while (reader.next_node(window, node)) {
    window.clear_nodes();
    window.append(node);
    stats.unknown_fields |= window.has_unknown_fields();
    doc.node(window, 0);
    ++stats.nodes;
    if (window.strings().memory_bytes() > kStringWindowBytes) {
      window = Trace();
      doc.forget_strings();
    }
  }
  stats.unknown_fields |= window.dropped_unknown_fields() != 0;  // the reader adds them at the end
  doc.end();
  return stats;
}

void write_json(const Trace& trace, const std::string& path, const JsonOptions& options) {
  OutputFile out(path);
  write_json(trace, out, options);
  out.commit();
}

}  // namespace chakra
