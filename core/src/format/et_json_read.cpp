// JSON → Trace for all formats written by et_json_write.cpp (see chakra/format/et_json.h).
//
// The input is split into top-level values (and, for the document format, into the elements of
// "nodes") by a small scanner, and each node is parsed on its own, so memory stays proportional
// to one node rather than to the whole document.
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra {
namespace {

using nlohmann::json;

struct JsonError {
  size_t pos;
  std::string message;
};

// ---- scanning top-level structure ------------------------------------------------------------

size_t skip_ws(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

size_t scan_string(std::string_view s, size_t i) {  // s[i] == '"'; returns one past the closing quote
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\')
      ++i;
    else if (s[i] == '"')
      return i + 1;
  }
  throw JsonError{s.size(), "unterminated string"};
}

// Returns one past the end of the JSON value starting at s[i] (assumed well-formed inside; the
// real parse of each piece reports detailed errors).
size_t scan_value(std::string_view s, size_t i) {
  if (i >= s.size()) throw JsonError{i, "unexpected end of input, expected a value"};
  if (s[i] == '"') return scan_string(s, i);
  if (s[i] != '{' && s[i] != '[') {
    size_t j = i;
    while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\r' &&
           s[j] != '\t')
      ++j;
    if (j == i) throw JsonError{i, std::string("unexpected '") + s[i] + "'"};
    return j;
  }
  int depth = 0;
  for (size_t j = i; j < s.size(); ++j) {
    char c = s[j];
    if (c == '"') {
      j = scan_string(s, j) - 1;
    } else if (c == '{' || c == '[') {
      if (++depth > 256) throw JsonError{j, "nested too deeply"};
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return j + 1;
    }
  }
  throw JsonError{s.size(), "unexpected end of input inside an object or array"};
}

json parse_piece(std::string_view s, size_t begin, size_t end) {
  try {
    return json::parse(s.substr(begin, end - begin));
  } catch (const json::parse_error& e) {
    size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string msg = e.what();
    if (auto p = msg.find("parse error"); p != std::string::npos) msg = msg.substr(p);
    throw JsonError{begin + at, msg};
  } catch (const json::exception& e) {  // a number out of range (nlohmann's out_of_range.406)
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw JsonError{begin, msg};
  }
}

// Calls f(key, value_begin, value_end) for each member of the object starting at s[i];
// returns one past the object.
template <typename F>
size_t for_each_member(std::string_view s, size_t i, F&& f) {
  if (i >= s.size() || s[i] != '{') throw JsonError{i, "expected an object"};
  i = skip_ws(s, i + 1);
  if (i < s.size() && s[i] == '}') return i + 1;
  for (;;) {
    if (i >= s.size() || s[i] != '"') throw JsonError{i, "expected a key string"};
    size_t key_end = scan_string(s, i);
    std::string key = parse_piece(s, i, key_end).get<std::string>();
    i = skip_ws(s, key_end);
    if (i >= s.size() || s[i] != ':') throw JsonError{i, "expected ':'"};
    i = skip_ws(s, i + 1);
    size_t value_end = scan_value(s, i);
    f(key, i, value_end);
    i = skip_ws(s, value_end);
    if (i < s.size() && s[i] == ',') {
      i = skip_ws(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == '}') return i + 1;
    throw JsonError{i, "expected ',' or '}'"};
  }
}

// ---- values ----------------------------------------------------------------------------------

[[noreturn]] void bad(const std::string& what, const json& v) {
  std::string shown = v.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  throw std::runtime_error(what + ", got " + shown);
}

bool parse_integer_text(const std::string& s, bool is_signed, uint64_t* mag, bool* neg) {
  size_t i = 0;
  *neg = false;
  if (is_signed && !s.empty() && s[0] == '-') {
    *neg = true;
    i = 1;
  }
  if (i == s.size()) return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  *mag = v;
  return true;
}

// An integer given as a JSON number, an integral float, or a decimal string (proto3 JSON).
// Returns its 64-bit two's-complement bits after checking [min, max].
uint64_t get_integer(const json& v, bool is_signed, int64_t min, uint64_t max, const std::string& what) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > max) bad(what + " out of range", v);
    return u;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0 && (!is_signed || i < min)) bad(what + " out of range", v);
    if (i > 0 && static_cast<uint64_t>(i) > max) bad(what + " out of range", v);
    return static_cast<uint64_t>(i);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d != std::floor(d) || !std::isfinite(d)) bad(what + " must be an integer", v);
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) bad(what + " out of range", v);
    return d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
  }
  if (v.is_string()) {
    uint64_t mag;
    bool neg;
    if (!parse_integer_text(v.get<std::string>(), is_signed, &mag, &neg)) bad(what + " must be an integer", v);
    if (neg) {
      if (mag > static_cast<uint64_t>(-(min + 1)) + 1) bad(what + " out of range", v);
      return ~mag + 1;
    }
    if (mag > max) bad(what + " out of range", v);
    return mag;
  }
  bad(what + " must be an integer", v);
}

uint64_t get_u64(const json& v, const std::string& what) {
  return get_integer(v, false, 0, std::numeric_limits<uint64_t>::max(), what);
}

double get_floating(const json& v, const std::string& what) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return d;
  }
  bad(what + " must be a number", v);
}

const std::string& get_string(const json& v, const std::string& what) {
  if (!v.is_string()) bad(what + " must be a string", v);
  return v.get_ref<const std::string&>();
}

// One value of an attribute, in storage bits.
uint64_t attr_scalar(const json& v, AttrKind k, Trace& t, const std::string& what) {
  using L = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  switch (k) {
    case AttrKind::Double: return bits_of_double(get_floating(v, what));
    case AttrKind::Float: return bits_of_float(static_cast<float>(get_floating(v, what)));
    case AttrKind::Int32:
    case AttrKind::Sint32:
    case AttrKind::Sfixed32: return get_integer(v, true, L::min(), L::max(), what);
    case AttrKind::Uint32:
    case AttrKind::Fixed32: return get_integer(v, false, 0, std::numeric_limits<uint32_t>::max(), what);
    case AttrKind::Int64:
    case AttrKind::Sint64:
    case AttrKind::Sfixed64: return get_integer(v, true, L64::min(), L64::max(), what);
    case AttrKind::Uint64:
    case AttrKind::Fixed64: return get_u64(v, what);
    case AttrKind::Bool:
      if (!v.is_boolean()) bad(what + " must be true or false", v);
      return v.get<bool>() ? 1 : 0;
    case AttrKind::String: return t.intern(get_string(v, what));
    case AttrKind::Bytes: {
      std::string raw;
      if (!decode_base64(get_string(v, what), raw)) bad(what + " must be base64", v);
      return t.intern(raw);
    }
    default: throw std::runtime_error(what + ": not a value kind");
  }
}

void attrs_from_json(const json& arr, AttrDrafts& out, Trace& t) {
  if (!arr.is_array()) bad("\"attr\" must be an array", arr);
  std::vector<uint64_t> values;
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& a = arr[i];
    std::string where = "attr[" + std::to_string(i) + "]";
    if (!a.is_object()) bad(where + " must be an object", a);
    if (auto it = a.find("name"); it != a.end() && it->is_string()) where += " \"" + it->get<std::string>() + "\"";
    AttrDraft d;
    bool have_value = false;
    for (const auto& [key, v] : a.items()) {
      if (key == "name") {
        d.name = t.intern(get_string(v, where + " name"));
      } else if (key == "docString" || key == "doc_string") {
        d.doc = t.intern(get_string(v, where + " docString"));
      } else if (auto kind = parse_attr_kind(key)) {
        if (v.is_null()) continue;
        if (have_value) throw std::runtime_error(where + " has more than one value");
        have_value = true;
        d.kind = *kind;
        const std::string what = where + " " + key;
        if (is_list(*kind)) {
          const json* items = &v;
          if (v.is_object()) {
            for (const auto& [lk, lv] : v.items())
              if (lk != "values") throw std::runtime_error(what + ": unknown key \"" + lk + "\"");
            static const json empty = json::array();
            items = v.contains("values") ? &v["values"] : &empty;
          }
          if (!items->is_array()) bad(what + " values must be an array", *items);
          values.clear();
          for (const json& e : *items) values.push_back(attr_scalar(e, element_kind(*kind), t, what + " element"));
          d.list_begin = static_cast<uint32_t>(out.elems.size());
          d.list_len = static_cast<uint32_t>(values.size());
          out.elems.insert(out.elems.end(), values.begin(), values.end());
        } else {
          d.bits = attr_scalar(v, *kind, t, what);
        }
      } else {
        throw std::runtime_error(where + ": unknown key \"" + key + "\"");
      }
    }
    out.attrs.push_back(d);
  }
}

void io_from_json(const json& v, IoStrings& io, Trace& t, const std::string& what) {
  if (!v.is_object()) bad(what + " must be an object", v);
  for (const auto& [key, s] : v.items()) {
    if (s.is_null()) continue;
    StrId id = t.intern(get_string(s, what + "." + key));
    if (key == "values")
      io.values = id;
    else if (key == "shapes")
      io.shapes = id;
    else if (key == "types")
      io.types = id;
    else
      throw std::runtime_error(what + ": unknown key \"" + key + "\"");
  }
}

void deps_from_json(const json& v, std::vector<uint64_t>& out, const std::string& what) {
  if (!v.is_array()) bad(what + " must be an array", v);
  for (const json& e : v) out.push_back(get_u64(e, what + " element"));
}

void node_from_json(const json& j, NodeDraft& d, Trace& t) {
  d.clear();
  if (!j.is_object()) bad("a node must be an object", j);
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) continue;
    if (key == "id") {
      d.id = get_u64(v, "id");
    } else if (key == "name") {
      d.name = t.intern(get_string(v, "name"));
    } else if (key == "type") {
      if (v.is_string()) {
        auto type = parse_node_type(v.get<std::string>());
        if (!type) bad("unknown node type", v);
        d.type = *type;
      } else {
        using L = std::numeric_limits<int32_t>;
        d.type = static_cast<int32_t>(get_integer(v, true, L::min(), L::max(), "type"));
      }
    } else if (key == "ctrlDeps" || key == "ctrl_deps") {
      deps_from_json(v, d.ctrl_deps, key);
    } else if (key == "dataDeps" || key == "data_deps") {
      deps_from_json(v, d.data_deps, key);
    } else if (key == "startTimeMicros" || key == "start_time_micros") {
      d.start_time_micros = get_u64(v, key);
    } else if (key == "durationMicros" || key == "duration_micros") {
      d.duration_micros = get_u64(v, key);
    } else if (key == "inputs") {
      d.has_inputs = true;
      io_from_json(v, d.inputs, t, key);
    } else if (key == "outputs") {
      d.has_outputs = true;
      io_from_json(v, d.outputs, t, key);
    } else if (key == "attr") {
      attrs_from_json(v, d.attrs, t);
    } else {
      throw std::runtime_error("unknown key \"" + key + "\"");
    }
  }
}

void metadata_from_json(const json& j, Trace& t) {
  if (!j.is_object()) bad("globalMetadata must be an object", j);
  StrId version = StringPool::kEmpty;
  AttrDrafts attrs;
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) continue;
    if (key == "version")
      version = t.intern(get_string(v, "version"));
    else if (key == "attr")
      attrs_from_json(v, attrs, t);
    else
      throw std::runtime_error("globalMetadata: unknown key \"" + key + "\"");
  }
  t.set_metadata(version, attrs);
}

// Keys only a Node has (to tell a leading node from a metadata object in reference output).
bool has_node_keys(const json& j) {
  static const char* keys[] = {"id",
                               "name",
                               "type",
                               "ctrlDeps",
                               "ctrl_deps",
                               "dataDeps",
                               "data_deps",
                               "startTimeMicros",
                               "start_time_micros",
                               "durationMicros",
                               "duration_micros",
                               "inputs",
                               "outputs"};
  for (const char* k : keys)
    if (j.contains(k)) return true;
  return false;
}

class Importer {
 public:
  Importer(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  Trace run() {
    try {
      size_t i = skip_ws(s_, 0);
      if (i == s_.size()) throw JsonError{i, "empty input: no JSON trace"};
      if (s_[i] != '{') throw JsonError{i, "expected '{' (a JSON trace starts with an object)"};
      bool document = false;
      for_each_member(s_, i, [&](const std::string& key, size_t, size_t) { document |= key == "nodes"; });
      if (document)
        read_document(i);
      else
        read_sequence(i);
    } catch (const JsonError& e) {
      throw Error(location(e.pos) + ": " + e.message);
    }
    return std::move(trace_);
  }

 private:
  void read_document(size_t i) {
    size_t end = for_each_member(s_, i, [&](const std::string& key, size_t b, size_t e) {
      if (key == "globalMetadata" || key == "global_metadata") {
        guarded(b, "globalMetadata", [&] { metadata_from_json(parse_piece(s_, b, e), trace_); });
      } else if (key == "nodes") {
        read_node_array(b, e);
      } else {
        throw JsonError{b, "unknown top-level key \"" + key + "\" (expected globalMetadata, nodes)"};
      }
    });
    if (skip_ws(s_, end) != s_.size()) throw JsonError{skip_ws(s_, end), "unexpected text after the document"};
  }

  void read_node_array(size_t b, size_t e) {
    if (s_[b] != '[') throw JsonError{b, "\"nodes\" must be an array"};
    size_t i = skip_ws(s_, b + 1);
    if (i < e && s_[i] == ']') return;
    for (;;) {
      size_t end = scan_value(s_, i);
      add_node(i, end);
      i = skip_ws(s_, end);
      if (i < e && s_[i] == ',') {
        i = skip_ws(s_, i + 1);
        continue;
      }
      if (i < e && s_[i] == ']') return;
      throw JsonError{i, "expected ',' or ']' in \"nodes\""};
    }
  }

  // Reference output (concatenated objects) and JSON Lines.
  void read_sequence(size_t i) {
    bool first = true;
    while (i < s_.size()) {
      size_t end = scan_value(s_, i);
      json j = parse_piece(s_, i, end);
      const bool wrapped_metadata =
          j.is_object() && j.size() == 1 && (j.contains("globalMetadata") || j.contains("global_metadata"));
      if (wrapped_metadata || (first && j.is_object() && !has_node_keys(j))) {
        if (!first) throw JsonError{i, "globalMetadata must come before the nodes"};
        const json& m = wrapped_metadata ? j.begin().value() : j;
        guarded(i, "globalMetadata", [&] { metadata_from_json(m, trace_); });
      } else {
        add_node(i, end, &j);
      }
      first = false;
      i = skip_ws(s_, end);
    }
  }

  void add_node(size_t b, size_t e, const json* parsed = nullptr) {
    json local;
    if (!parsed) {
      local = parse_piece(s_, b, e);
      parsed = &local;
    }
    std::string label = "node " + std::to_string(trace_.size());
    if (parsed->is_object())
      if (auto it = parsed->find("id"); it != parsed->end() && !it->is_structured())
        label += " (id " + it->dump() + ")";
    guarded(b, label, [&] { node_from_json(*parsed, draft_, trace_); });
    trace_.append(draft_);
  }

  template <typename F>
  void guarded(size_t pos, const std::string& what, F&& f) {
    try {
      f();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // value errors from the helpers above, or nlohmann's
      throw JsonError{pos, what + ": " + e.what()};
    }
  }

  std::string location(size_t pos) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < pos && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return name_ + ":" + std::to_string(line) + ":" + std::to_string(col);
  }

  std::string_view s_;
  const std::string& name_;
  Trace trace_;
  NodeDraft draft_;
};

}  // namespace

bool looks_like_chakra_json(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return false;
  return head.find("\"globalMetadata\"") != std::string_view::npos || head.find("_NODE\"") != std::string_view::npos;
}

Trace read_json_trace(std::string_view text, const std::string& name) { return Importer(text, name).run(); }

Trace read_json_trace_file(const std::string& path, const InputLimits& limits) {
  std::string text = read_file(path, limits);
  return read_json_trace(text, path);
}

}  // namespace chakra
