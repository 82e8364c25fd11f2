// What the sweep's parts share (sweep.cpp, sweep_table.cpp): errors naming their source, values as
// text, and the constraints' expression language. Private to the app layer.
#pragma once

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chakra/app/sweep.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::sweep {

[[noreturn]] inline void fail(const std::string& source, const std::string& what) { throw Error(source + ": " + what); }

inline std::string describe(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A spec's values read as what a field needs; chakra::Error naming the field (`what`) otherwise.
inline uint64_t as_uint(const Json& v, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  if (v.is_number_float() && v.get<double>() >= 0 && std::floor(v.get<double>()) == v.get<double>() &&
      v.get<double>() < 1.8e19)
    return static_cast<uint64_t>(v.get<double>());
  throw Error(what + ": " + describe(v) + " is not a whole number >= 0");
}

inline std::string text_of(const Json& v, const std::string& what) {
  if (!v.is_string()) throw Error(what + ": " + describe(v) + " is not text");
  return v.get<std::string>();
}

// A path in a spec: relative ones are relative to the spec's folder.
inline std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// A measured run grown by data parallelism (a sweep's `workload: {project: {...}}`): the
// folder's files (documentation, *.md, aside) opened as the web page opens dropped files (a
// PyTorch host ET linked with its Kineto trace and converted, .et ranks, a comm-group file),
// checked against `sha256` when given (folder_sha256), then projected to `to` ranks as chakra
// project does, its data-parallel groups given (`dp`: ids, 0 for the collectives without a
// group) or inferred. Each rank is kept as the simulator reads it (simulation_copy).
struct ProjectedRun {
  uint32_t npus = 0;
  std::function<std::string(uint32_t)> make;  // rank i's trace, .et bytes (thread-safe)
  std::map<int, std::vector<uint32_t>> groups;
};
ProjectedRun projected_run(const Json& spec, const std::string& base_dir);
// SHA-256 over a folder's files in name order: each one's name, size and content (gzip undone), a
// new line after the name and the size; *.md left out.
std::string folder_sha256(const std::string& folder);

// ---- constraints: a small expression language over the point's values ------------------------
// expr := or;  or := and ('or' and)*;  and := cmp ('and' cmp)*;  cmp := sum (('=='|'!='|'<'|
// '<='|'>'|'>=') sum)?;  sum := prod (('+'|'-') prod)*;  prod := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | 'not' unary | atom;  atom := number | "string" | name | '(' expr ')'.
// A name is an axis's field, the last part of one ("dp" for "workload.synth.dp"), or any dotted
// path into the point's configuration.
struct Value {
  bool is_text = false;
  double number = 0;
  std::string text;
};

class Expr {
 public:
  Expr(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {}

  // Parses without names to check the syntax.
  void check() {
    lookup_ = nullptr;
    pos_ = 0;
    evaluate();
  }
  bool holds(const std::function<std::optional<Value>(const std::string&)>& lookup) {
    lookup_ = &lookup;
    pos_ = 0;
    const Value v = evaluate();
    return v.is_text ? !v.text.empty() : v.number != 0;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail(source_, "constraint " + quoted_excerpt(text_) + ": " + what);
  }
  Value evaluate() {
    Value v = disjunction();
    skip();
    if (pos_ != text_.size()) error("unexpected " + quoted_excerpt(text_.substr(pos_)));
    return v;
  }
  void skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view token) {
    skip();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(token[0]));
    if (word && pos_ + token.size() < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_ + token.size()])) || text_[pos_ + token.size()] == '_'))
      return false;
    pos_ += token.size();
    return true;
  }
  static Value num(double d) { return Value{false, d, {}}; }
  double number_of(const Value& v) const {
    if (v.is_text) error("'" + v.text + "' is not a number");
    return v.number;
  }
  Value disjunction() {
    Value v = conjunction();
    while (eat("or") || eat("||")) {
      const Value r = conjunction();
      v = num((v.is_text ? !v.text.empty() : v.number != 0) || (r.is_text ? !r.text.empty() : r.number != 0));
    }
    return v;
  }
  Value conjunction() {
    Value v = comparison();
    while (eat("and") || eat("&&")) {
      const Value r = comparison();
      v = num((v.is_text ? !v.text.empty() : v.number != 0) && (r.is_text ? !r.text.empty() : r.number != 0));
    }
    return v;
  }
  Value comparison() {
    Value a = sum();
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!eat(op)) continue;
      const Value b = sum();
      if (a.is_text || b.is_text) {
        if (op != "==" && op != "!=") error("text compares only with == and !=");
        const bool same = a.is_text == b.is_text && a.text == b.text;
        return num(op == "==" ? same : !same);
      }
      const double x = a.number, y = b.number;
      return num(op == "=="   ? x == y
                 : op == "!=" ? x != y
                 : op == "<=" ? x <= y
                 : op == ">=" ? x >= y
                 : op == "<"  ? x < y
                              : x > y);
    }
    return a;
  }
  Value sum() {
    Value v = product();
    while (true) {
      if (eat("+"))
        v = num(number_of(v) + number_of(product()));
      else if (eat("-"))
        v = num(number_of(v) - number_of(product()));
      else
        return v;
    }
  }
  Value product() {
    Value v = unary();
    while (true) {
      if (eat("*")) {
        v = num(number_of(v) * number_of(unary()));
      } else if (eat("/")) {
        const double d = number_of(unary());
        v = num(d == 0 ? NAN : number_of(v) / d);
      } else if (eat("%")) {
        const double d = number_of(unary());
        v = num(d == 0 ? NAN : std::fmod(number_of(v), d));
      } else {
        return v;
      }
    }
  }
  Value unary() {
    if (eat("-")) return num(-number_of(unary()));
    if (eat("not")) {
      const Value v = unary();
      return num(!(v.is_text ? !v.text.empty() : v.number != 0));
    }
    return atom();
  }
  Value atom() {
    skip();
    if (pos_ >= text_.size()) error("an operand is missing");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Value v = disjunction();
      if (!eat(")")) error("')' is missing");
      return v;
    }
    if (c == '"' || c == '\'') {
      const size_t end = text_.find(c, pos_ + 1);
      if (end == std::string::npos) error("a string is not closed");
      Value v{true, 0, text_.substr(pos_ + 1, end - pos_ - 1)};
      pos_ = end + 1;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      const double d = std::strtod(text_.c_str() + pos_, &end);
      pos_ = static_cast<size_t>(end - text_.c_str());
      return num(d);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                     text_[pos_] == '.' || text_[pos_] == '-'))
        ++pos_;
      const std::string name = text_.substr(start, pos_ - start);
      if (!lookup_) return num(1);  // checking the syntax only
      std::optional<Value> v = (*lookup_)(name);
      if (!v) error("no axis or field named '" + name + "'");
      return *v;
    }
    error("unexpected " + quoted_excerpt(text_.substr(pos_)));
  }

  std::string text_, source_;
  size_t pos_ = 0;
  const std::function<std::optional<Value>(const std::string&)>* lookup_ = nullptr;
};

}  // namespace chakra::sweep
