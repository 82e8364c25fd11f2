#include "pytorch/host_et_reader.h"

#include <algorithm>
#include <charconv>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

using namespace std::string_view_literals;

namespace chakra::convert {
namespace {

// String equality without a library call: the keys compared here are a few bytes long, and
// std::string_view's == calls memcmp for each.
bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Bytes of one tensor value [tensor_id, storage_id, offset, numel, itemsize, device], written
// in Python repr form; nullopt if it is not such a list.
std::optional<uint64_t> tensor_bytes(std::string_view repr) {
  if (repr.size() < 2 || repr.front() != '[') return std::nullopt;
  repr = repr.substr(1);
  int64_t field[5];
  for (int k = 0; k < 5; ++k) {
    while (!repr.empty() && repr.front() == ' ') repr.remove_prefix(1);
    auto [p, ec] = std::from_chars(repr.data(), repr.data() + repr.size(), field[k]);
    if (ec != std::errc()) return std::nullopt;
    repr.remove_prefix(static_cast<size_t>(p - repr.data()));
    if (repr.empty() || (repr.front() != ',' && repr.front() != ']')) return std::nullopt;
    if (repr.front() == ']' && k < 4) return std::nullopt;
    repr.remove_prefix(1);
  }
  return static_cast<uint64_t>(field[3]) * static_cast<uint64_t>(field[4]);
}

// Splits a Python list repr "[a, [b, c], 'd']" into its top-level element texts.
std::vector<std::string_view> split_list_repr(std::string_view s) {
  std::vector<std::string_view> out;
  if (s.size() < 2 || s.front() != '[') return out;
  int depth = 0;
  char quote = 0;
  size_t start = 1;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 2;  // ", "
    }
  }
  if (s.size() > 2) out.push_back(s.substr(start, s.size() - 1 - start));
  return out;
}

// Fills the HostEt it is.
class Parser : public HostEt {
 public:
  Parser(JsonPull& json, Trace& strings, Progress* progress, const ByteSource& src)
      : j_(json), t_(strings), progress_(progress), src_(src) {}

  void document() {
    if (j_.next_is_binary())
      j_.fail(
          "not a PyTorch execution trace but binary data (convert pytorch reads PyTorch's JSON traces; a Chakra "
          ".et trace is read by chakra info, validate and jsonize)");
    if (j_.peek() != JsonPull::Kind::Object)
      j_.fail("not a PyTorch execution trace: the document is not a JSON object");
    j_.begin_object();
    std::string key;
    bool saw_nodes = false, saw_trace_events = false;
    while (j_.next_key(key)) {
      if (key == "nodes"sv) {
        saw_nodes = true;
        node_list();
      } else if (key == "schema"sv || key == "pid"sv || key == "time"sv || key == "start_ts"sv ||
                 key == "finish_ts"sv) {
        metadata[key] = scalar();
      } else if (key == "profiler_steps"sv) {
        profiler_step_list();
      } else {
        saw_trace_events |= key == "traceEvents"sv;
        j_.skip();
      }
    }
    if (!j_.at_end()) j_.fail("trailing data after the JSON document");
    if (!saw_nodes)
      j_.fail(saw_trace_events ? "this is a Kineto (profiler) trace, not a host execution trace; link it "
                                 "with its host trace first (chakra link)"
                               : "not a PyTorch execution trace: no \"nodes\" list");
  }

 private:
  nlohmann::json scalar() {
    switch (j_.peek()) {
      case JsonPull::Kind::String: {
        std::string s;
        j_.read_string(s);
        return s;
      }
      case JsonPull::Kind::Number: {
        bool is_int;
        std::string t(j_.read_number_text(is_int));
        return nlohmann::json::parse(t, nullptr, false);
      }
      default: j_.skip(); return nullptr;
    }
  }

  void node_list() {
    if (j_.peek() != JsonPull::Kind::Array) j_.fail("\"nodes\" is not a list");
    j_.begin_array();
    // Host ET nodes take 1-3 KB of JSON; reserving address space is free until touched.
    uint64_t raw = src_.raw_size() * (src_.compressed() ? 20 : 1);
    nodes.reserve(static_cast<size_t>(std::min<uint64_t>(raw / 700, uint64_t{1} << 26)));
    while (j_.next_element()) {
      if (j_.peek() != JsonPull::Kind::Object) j_.fail("a node is not a JSON object");
      nodes.push_back(HostNode{});
      node(nodes.back());
      if ((nodes.size() & 4095) == 0) report_progress(progress_, "reading", src_.raw_position(), src_.raw_size());
    }
  }

  // values / shapes / types of an IOInfo (0.0.4 schemas: an object; 1.0.1: separate keys).
  struct Io {
    std::string values, shapes, types_repr;
    std::vector<std::pair<size_t, size_t>> value_spans;  // top-level elements in `values`
    std::vector<std::string> types;
    // Empties every field but keeps its memory: nodes are read into the same two Io objects.
    void clear() {
      values.clear(), shapes.clear(), types_repr.clear();
      value_spans.clear(), types.clear();
    }
  };

  // [{"name": "ProfilerStep#N", "ts": µs, "dur": µs}, ...]; entries without the three are skipped.
  void profiler_step_list() {
    if (!enter_array()) return;
    while (j_.next_element()) {
      if (j_.peek() != JsonPull::Kind::Object) {
        j_.skip();
        continue;
      }
      ProfilerStep step;
      double ts = NAN, dur = NAN;
      std::string_view key;
      j_.begin_object();
      while (j_.next_key(key)) {
        if (key == "name"sv && j_.peek() == JsonPull::Kind::String)
          j_.read_string(step.name);
        else if (key == "ts"sv)
          number_or_skip(ts);
        else if (key == "dur"sv)
          number_or_skip(dur);
        else
          j_.skip();
      }
      if (step.name.empty() || !(ts >= 0) || !(dur >= 0)) continue;
      step.ts = ts, step.dur = dur;
      profiler_steps.push_back(std::move(step));
    }
  }

  // [[begin, end], ...] µs spans of the current node into `into`.
  void span_list(std::vector<BlockedSpan>& into, const char* field) {
    if (!enter_array()) return;
    const std::string not_a_span = std::string("a \"") + field + "\" entry is not [begin, end]";
    while (j_.next_element()) {
      double span[2];
      if (j_.peek() != JsonPull::Kind::Array) j_.fail(not_a_span);
      j_.begin_array();
      for (double& x : span) {
        if (!j_.next_element() || j_.peek() != JsonPull::Kind::Number) j_.fail(not_a_span);
        x = j_.read_double();
      }
      if (j_.next_element()) j_.fail(not_a_span);
      into.push_back({static_cast<uint32_t>(nodes.size() - 1), span[0], span[1]});
    }
  }
  // [node id, ...] of the current node into `into`.
  void id_list(std::vector<std::pair<uint32_t, int64_t>>& into) {
    if (!enter_array()) return;
    while (j_.next_element()) {
      if (j_.peek() == JsonPull::Kind::Number)
        into.emplace_back(static_cast<uint32_t>(nodes.size() - 1), j_.read_int64());
      else
        j_.skip();
    }
  }

  // The number at the cursor into `into`; anything else (null: not measured) is skipped.
  void number_or_skip(double& into) {
    if (j_.peek() == JsonPull::Kind::Number)
      into = j_.read_double();
    else
      j_.skip();
  }
  // Enters the array at the cursor; anything else is skipped, and then false.
  bool enter_array() {
    if (j_.peek() != JsonPull::Kind::Array) {
      j_.skip();
      return false;
    }
    j_.begin_array();
    return true;
  }

  void list_repr(std::string& out, std::vector<std::pair<size_t, size_t>>* spans) {
    out.clear();
    if (j_.peek() != JsonPull::Kind::Array) {
      j_.repr(out);
      return;
    }
    j_.begin_array();
    out += '[';
    bool first = true;
    while (j_.next_element()) {
      if (!first) out += ", ";
      first = false;
      size_t b = out.size();
      j_.repr(out);
      if (spans) spans->push_back({b, out.size()});
    }
    out += ']';
  }

  void types_list(Io& io) {
    io.types.clear();
    io.types_repr.clear();
    if (j_.peek() != JsonPull::Kind::Array) {
      j_.repr(io.types_repr);
      return;
    }
    j_.begin_array();
    io.types_repr += '[';
    while (j_.next_element()) {
      if (io.types.size()) io.types_repr += ", ";
      if (j_.peek() == JsonPull::Kind::String) {
        io.types.emplace_back();
        j_.read_string(io.types.back());
        append_python_string(io.types_repr, io.types.back());
      } else {
        io.types.emplace_back();
        j_.repr(io.types_repr);
      }
    }
    io.types_repr += ']';
  }

  void io_object(Io& io) {
    if (j_.peek() != JsonPull::Kind::Object) j_.fail("\"inputs\"/\"outputs\" is not an object");
    j_.begin_object();
    std::string_view key;
    while (j_.next_key(key)) {
      if (key == "values"sv)
        list_repr(io.values, &io.value_spans);
      else if (key == "shapes"sv)
        list_repr(io.shapes, nullptr);
      else if (key == "types"sv)
        types_list(io);
      else
        j_.skip();
    }
  }

  int64_t integer(const char* what) {
    if (j_.peek() != JsonPull::Kind::Number) j_.fail(std::string("\"") + what + "\" is not a number");
    return j_.read_int64();
  }

  // Index of `name` in kIntAttrs, or -1.
  static int int_attr_index(std::string_view name) {
    for (int k = 0; k < kIntAttrCount; ++k)
      if (same_text(name, kIntAttrs[k])) return k;
    return -1;
  }
  static void set_int_attr(HostNode& n, int k, int64_t v) {
    n.int_attr[k] = v;
    n.int_attr_present |= static_cast<uint8_t>(1u << k);
  }

  void attr_entry(HostNode& n) {
    if (j_.peek() != JsonPull::Kind::Object) {
      j_.skip();
      return;
    }
    j_.begin_object();
    std::string_view key;
    std::string& name = attr_name_;
    name.clear();
    // The value, kept as what the reference would see: an int (or float) or a string.
    bool has_number = false, has_string = false;
    int64_t number = 0;
    while (j_.next_key(key)) {
      // The key is read before peek(), which may refill the window under it.
      const bool is_name = same_text(key, "name"), is_value = same_text(key, "value");
      const JsonPull::Kind kind = j_.peek();
      if (is_name && kind == JsonPull::Kind::String) {
        name.assign(j_.read_string_view());
      } else if (is_value && kind == JsonPull::Kind::Number) {
        number = j_.read_int64();
        has_number = true;
      } else if (is_value && kind == JsonPull::Kind::String) {
        j_.read_string(attr_str_);
        has_string = true;
      } else {
        j_.skip();
      }
    }
    if (int k = int_attr_index(name); has_number && k >= 0) set_int_attr(n, k, number);
    if (has_string && name == "op_schema"sv) {
      n.op_schema = t_.intern(attr_str_);
      n.has_op_schema = true;
    }
    // Every attribute becomes a field of the reference's node object, so this one replaces the
    // top-level pg_name.
    if (has_string && name == "pg_name"sv) n.pg_name = t_.intern(attr_str_);
  }

  void finish_io(HostNode& n, Io& in, Io& out) {
    auto intern_or_empty_list = [&](std::string_view s) { return t_.intern(s.empty() ? "[]"sv : s); };
    n.inputs = {intern_or_empty_list(in.values), intern_or_empty_list(in.shapes), intern_or_empty_list(in.types_repr)};
    n.outputs = {intern_or_empty_list(out.values), intern_or_empty_list(out.shapes),
                 intern_or_empty_list(out.types_repr)};
    // Tensor bytes of the inputs (the reference's comm_size).
    for (size_t k = 0; k < in.value_spans.size() && k < in.types.size(); ++k) {
      const std::string& type = in.types[k];
      std::string_view v(in.values.data() + in.value_spans[k].first,
                         in.value_spans[k].second - in.value_spans[k].first);
      if (k == 1 || k == 2) {
        int64_t x;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec == std::errc() && p == v.data() + v.size()) (k == 1 ? n.int_input1 : n.int_input2) = x;
      }
      if (type.find("Tensor") == std::string::npos) continue;
      if (type.rfind("GenericList[", 0) == 0) {
        for (std::string_view inner : split_list_repr(v)) {
          auto b = tensor_bytes(inner);
          if (b)
            n.input_tensor_bytes += *b;
          else
            n.malformed_tensor = true;
        }
      } else {
        auto b = tensor_bytes(v);
        if (b)
          n.input_tensor_bytes += *b;
        else
          n.malformed_tensor = true;
      }
    }
  }

  // The node keys the converter reads; IntAttr + k is kIntAttrs[k] at the top level.
  enum NodeKey : uint8_t {
    Other,
    Id,
    Name,
    Parent,
    Inputs,
    Outputs,
    InputShapes,
    OutputShapes,
    InputTypes,
    OutputTypes,
    Attrs,
    ExclusiveDur,
    InclusiveDur,
    BlockedDur,
    BlockedSpans,
    Ts,
    InterThreadDep,
    SyncDep,
    Cat,
    Stream,
    PgName,
    OpSchema,
    StallClassKey,
    StallDur,
    StallEvidence,
    StallSpans,
    StallDep,
    IntAttr
  };
  // A switch on the length, then one comparison: every node has ~10 keys and ~7 attribute
  // objects, and a chain of string compares per key showed in profiles.
  static NodeKey classify(std::string_view key) {
    auto is = [&](std::string_view text) { return same_text(key, text); };
    NodeKey k = Other;
    switch (key.size()) {
      case 2: k = is("id") ? Id : is("ts") ? Ts : Other; break;
      case 3: k = is("cat") ? Cat : Other; break;
      case 4: k = is("name") ? Name : Other; break;
      case 5: k = is("attrs") ? Attrs : Other; break;
      case 6: k = is("parent") ? Parent : is("inputs") ? Inputs : is("stream") ? Stream : Other; break;
      case 7: k = is("outputs") ? Outputs : is("pg_name") ? PgName : Other; break;
      case 8: k = is("sync_dep") ? SyncDep : Other; break;
      case 9:
        k = is("ctrl_deps")   ? Parent
            : is("op_schema") ? OpSchema
            : is("stall_dur") ? StallDur
            : is("stall_dep") ? StallDep
                              : Other;
        break;
      case 11:
        k = is("input_types")   ? InputTypes
            : is("blocked_dur") ? BlockedDur
            : is("stall_class") ? StallClassKey
            : is("stall_spans") ? StallSpans
                                : Other;
        break;
      case 14: k = is("stall_evidence") ? StallEvidence : Other; break;
      case 12: k = is("input_shapes") ? InputShapes : is("output_types") ? OutputTypes : Other; break;
      case 13:
        k = is("output_shapes")   ? OutputShapes
            : is("exclusive_dur") ? ExclusiveDur
            : is("inclusive_dur") ? InclusiveDur
            : is("blocked_spans") ? BlockedSpans
                                  : Other;
        break;
      case 16: k = is("inter_thread_dep") ? InterThreadDep : Other; break;
    }
    if (k == Other)
      if (int a = int_attr_index(key); a >= 0) k = static_cast<NodeKey>(IntAttr + a);
    return k;
  }

  void node(HostNode& n) {
    j_.begin_object();
    std::string_view key;
    bool has_id = false;
    in_.clear();
    out_.clear();
    while (j_.next_key(key)) {
      const NodeKey k = classify(key);
      switch (k) {
        case Id:
          n.id = integer("id");
          has_id = true;
          break;
        case Name:
          if (j_.peek() != JsonPull::Kind::String) j_.fail("a node's \"name\" is not a string");
          n.name = t_.intern(j_.read_string_view());
          break;
        case Parent:
          if (j_.peek() == JsonPull::Kind::Number) {
            n.parent = j_.read_int64();
            n.has_parent = true;
          } else {
            j_.skip();
          }
          break;
        case Inputs:
        case Outputs: {
          Io& io = k == Inputs ? in_ : out_;
          if (j_.peek() == JsonPull::Kind::Array)
            list_repr(io.values, &io.value_spans);  // schema 1.0.1: the values list itself
          else
            io_object(io);
          break;
        }
        case InputShapes:
        case OutputShapes: list_repr(k == InputShapes ? in_.shapes : out_.shapes, nullptr); break;
        case InputTypes:
        case OutputTypes: types_list(k == InputTypes ? in_ : out_); break;
        case Attrs:
          if (enter_array())
            while (j_.next_element()) attr_entry(n);
          break;
        case ExclusiveDur: number_or_skip(n.exclusive_dur); break;
        case InclusiveDur: number_or_skip(n.inclusive_dur); break;
        case BlockedDur: number_or_skip(n.blocked_dur); break;
        case Ts: number_or_skip(n.ts); break;
        case InterThreadDep:
          if (j_.peek() == JsonPull::Kind::Number)
            n.inter_thread_dep = j_.read_int64();
          else
            j_.skip();
          break;
        case SyncDep: id_list(sync_deps); break;
        case BlockedSpans: span_list(blocked_spans, "blocked_spans"); break;
        case StallDep: id_list(stall_deps); break;
        case StallSpans: span_list(stall_spans, "stall_spans"); break;
        case StallDur: number_or_skip(n.stall_dur); break;
        case StallClassKey:
          if (j_.peek() != JsonPull::Kind::String) j_.fail("a node's \"stall_class\" is not a string");
          j_.read_string(str_);
          if (std::optional<StallClass> c = parse_stall_class(str_))
            n.stall_class = static_cast<int8_t>(*c);
          else
            j_.fail("unknown \"stall_class\" '" + str_ + "'");
          break;
        case StallEvidence:
          if (j_.peek() == JsonPull::Kind::String)
            n.stall_evidence = t_.intern(j_.read_string_view());
          else
            j_.skip();
          break;
        case Cat:
          if (j_.peek() == JsonPull::Kind::Null) {
            j_.read_null();
          } else {
            n.gpu = true;
            j_.skip();
          }
          break;
        case Stream:
          if (j_.peek() == JsonPull::Kind::Null) {
            j_.read_null();
            n.stream_null = true;
          } else if (j_.peek() == JsonPull::Kind::Number) {
            n.stream = j_.read_int64();
          } else {
            j_.skip();
          }
          break;
        case PgName:
          if (j_.peek() == JsonPull::Kind::String) {
            j_.read_string(str_);
            if (n.pg_name == StringPool::kEmpty) n.pg_name = t_.intern(str_);
          } else {
            j_.skip();
          }
          break;
        case OpSchema:  // schema 1.0.1 keeps attributes at the top level
          if (j_.peek() == JsonPull::Kind::String) {
            j_.read_string(str_);
            n.op_schema = t_.intern(str_);
            n.has_op_schema = true;
          } else {
            j_.skip();
          }
          break;
        case Other: j_.skip(); break;
        default:  // IntAttr + k: schema 1.0.1 keeps them at the top level
          if (j_.peek() == JsonPull::Kind::Number)
            set_int_attr(n, k - IntAttr, j_.read_int64());
          else
            j_.skip();
      }
    }
    if (!has_id) j_.fail("a node has no \"id\"");
    finish_io(n, in_, out_);
  }

  JsonPull& j_;
  Trace& t_;
  Progress* progress_;
  const ByteSource& src_;
  Io in_, out_;
  std::string str_, attr_str_, attr_name_;
};

}  // namespace

HostEt read_host_et(JsonPull& json, Trace& strings, Progress* progress, const ByteSource& src) {
  Parser parser(json, strings, progress, src);
  parser.document();
  return std::move(static_cast<HostEt&>(parser));
}

}  // namespace chakra::convert
