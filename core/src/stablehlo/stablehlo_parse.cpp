// Lexer and recursive-descent parser for StableHLO textual MLIR. Not the MLIR grammar: the
// op-line skeleton `results = name operands attributes regions : signature` that every op
// shares, with brackets balanced so that attributes we do not read are skipped intact.
#include <algorithm>
#include <cstring>

#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "stablehlo_ir.h"

namespace chakra::stablehlo::ir {
namespace {

constexpr size_t kMaxNesting = 200;                    // regions within regions; deeper input is hostile
constexpr double kMaxValueBytes = 1125899906842624.0;  // 2^50: one value of a petabyte is hostile

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-';
}

class Lexer {
 public:
  Lexer(std::string_view s, const std::string& name, std::vector<Token>& out) : s_(s), name_(name), out_(out) {}

  void run() {
    while (true) {
      skip_space();
      if (i_ >= s_.size()) break;
      const size_t start = i_;
      const uint32_t col = static_cast<uint32_t>(i_ - line_begin_ + 1);
      const char c = s_[i_];
      Tok kind;
      if (c == '/' && peek(1) == '/') {
        const size_t end = line_end();
        std::string_view body = s_.substr(i_ + 2, end - i_ - 2);
        i_ = end;
        while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
        while (!body.empty() && (body.back() == ' ' || body.back() == '\r')) body.remove_suffix(1);
        if (body == "-----") push(Tok::Separator, start, col);
        continue;
      }
      if (c == '{' && peek(1) == '-' && peek(2) == '#') {  // {-# dialect_resources ... #-}
        const size_t end = s_.find("#-}", i_);
        if (end == std::string_view::npos) fail(col, "unterminated '{-#' section");
        advance_to(end + 3);
        continue;
      }
      if (c == '%' || c == '^' || c == '@' || c == '#' || c == '!') {
        ++i_;
        if (c == '@' && peek(0) == '"') {
          scan_string(col);
        } else {
          while (i_ < s_.size() && (ident_char(s_[i_]) || s_[i_] == '#') && !(s_[i_] == '-' && peek(1) == '>')) ++i_;
        }
        kind = c == '%'   ? Tok::Value
               : c == '^' ? Tok::Block
               : c == '@' ? Tok::Symbol
               : c == '#' ? Tok::Hash
                          : Tok::Type;
        if (i_ == start + 1) fail(col, std::string("'") + c + "' without a name");
        if (c == '!' && peek(0) == '<') scan_angle(col);
      } else if (c == '"') {
        scan_string(col);
        kind = Tok::String;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        ++i_;
        if (c == '0' && (peek(0) == 'x' || peek(0) == 'X')) {
          ++i_;
          while (i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        } else {
          while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
          if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E') &&
              (std::isdigit(static_cast<unsigned char>(peek(1))) ||
               ((peek(1) == '+' || peek(1) == '-') && std::isdigit(static_cast<unsigned char>(peek(2))))))
            for (i_ += 2; i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]));) ++i_;
        }
        kind = Tok::Number;
      } else if (c == '-' && peek(1) == '>') {
        i_ += 2;
        kind = Tok::Arrow;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i_ < s_.size() && ident_char(s_[i_]) && !(s_[i_] == '-' && peek(1) == '>')) ++i_;
        const std::string_view word = s_.substr(start, i_ - start);
        kind = Tok::Ident;
        if ((word == "tensor" || word == "tuple" || word == "complex" || word == "vector" || word == "memref") &&
            peek(0) == '<') {
          scan_angle(col);
          kind = Tok::Type;
          // Dims past int64 saturate and their product overflows to nonsense costs; no real
          // program has a value of a petabyte.
          const std::string_view type = s_.substr(start, i_ - start);
          if (!(parse_type(type).bytes() <= kMaxValueBytes))
            fail(col, "type " + quoted_excerpt(type) + " holds more than 2^50 bytes");
        }
      } else if (std::strchr("()[]{}<>,:=*?+|", c)) {
        ++i_;
        kind = Tok::Punct;
      } else {
        fail(col, std::string("unexpected character '") + c + "'");
      }
      push(kind, start, col);
    }
    out_.push_back({Tok::End, true, line_, 1, {}});
  }

 private:
  char peek(size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  size_t line_end() const {
    size_t e = s_.find('\n', i_);
    return e == std::string_view::npos ? s_.size() : e;
  }
  void skip_space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_begin_ = ++i_;
        at_line_start_ = true;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else {
        break;
      }
    }
  }
  void advance_to(size_t end) {  // past a multi-line construct, keeping line numbers right
    for (; i_ < end; ++i_)
      if (s_[i_] == '\n') ++line_, line_begin_ = i_ + 1;
  }
  void scan_string(uint32_t col) {
    ++i_;
    while (true) {
      const size_t q = s_.find_first_of("\"\\\n", i_);
      if (q == std::string_view::npos || s_[q] == '\n') fail(col, "unterminated string");
      if (s_[q] == '\\') {
        i_ = q + 2;
        continue;
      }
      i_ = q + 1;
      return;
    }
  }
  // A type's <...>: nested angles, strings and `->` (which is not a closing bracket).
  void scan_angle(uint32_t col) {
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        scan_string(col);
        continue;
      }
      if (c == '\n') fail(col, "unterminated type");
      if (c == '-' && peek(1) == '>') {
        i_ += 2;
        continue;
      }
      ++i_;
      if (c == '<')
        ++depth;
      else if (c == '>' && --depth == 0)
        return;
    }
    fail(col, "unterminated type");
  }
  void push(Tok kind, size_t start, uint32_t col) {
    out_.push_back({kind, at_line_start_, line_, col, s_.substr(start, i_ - start)});
    at_line_start_ = false;
  }
  [[noreturn]] void fail(uint32_t col, const std::string& what) const {
    throw Error(name_ + ":" + std::to_string(line_) + ":" + std::to_string(col) + ": " + what);
  }

  std::string_view s_;
  const std::string& name_;
  std::vector<Token>& out_;
  size_t i_ = 0, line_begin_ = 0;
  uint32_t line_ = 1;
  bool at_line_start_ = true;
};

bool is_scalar_type_word(std::string_view w) {
  if (w == "index" || w == "none" || w == "bf16" || w == "tf32") return true;
  if (w.size() < 2) return false;
  size_t k = 0;
  if (w[0] == 's' || w[0] == 'u') k = 1;
  if (w[k] != 'i' && w[k] != 'f') return false;
  return k + 1 < w.size() && std::isdigit(static_cast<unsigned char>(w[k + 1]));
}

class Parser {
 public:
  explicit Parser(File& f) : f_(f), t_(f.tokens) {}

  void run() {
    while (cur().kind != Tok::End) {
      if (cur().kind == Tok::Separator) {
        ++p_;
        continue;
      }
      if (cur().is("module")) {
        parse_module();
      } else if (cur().is("func.func")) {  // a bare function list: one implicit module
        Module m;
        m.line = cur().line;
        while (cur().is("func.func")) m.funcs.push_back(parse_func());
        f_.modules.push_back(std::move(m));
      } else if (cur().kind == Tok::Hash && at(1).is('=')) {  // #loc1 = loc(...)
        skip_line();
      } else {
        fail(cur(), "expected 'module' or 'func.func', found '" + std::string(cur().text) + "'");
      }
    }
    if (f_.modules.empty()) throw Error(f_.name + ": no module or function found (is this StableHLO text?)");
  }

 private:
  const Token& cur() const { return t_[p_]; }
  const Token& at(size_t k) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  [[noreturn]] void fail(const Token& t, const std::string& what) const {
    throw Error(f_.name + ":" + std::to_string(t.line) + ":" + std::to_string(t.col) + ": " + what);
  }
  void expect(char c, const char* context) {
    if (!cur().is(c))
      fail(cur(), std::string("expected '") + c + "' " + context + ", found '" + std::string(cur().text) + "'");
    ++p_;
  }
  void skip_line() {
    const uint32_t line = cur().line;
    ++p_;
    while (cur().kind != Tok::End && !(cur().line_start && cur().line != line)) skip_balanced_one();
  }
  // Skips one token, or a whole bracketed group when the token opens one.
  void skip_balanced_one() {
    const Token& open = cur();
    if (open.kind != Tok::Punct || !std::strchr("([{<", open.text[0])) {
      ++p_;
      return;
    }
    std::vector<char> stack;
    do {
      const Token& t = cur();
      if (t.kind == Tok::End) fail(open, std::string("unbalanced '") + open.text[0] + "'");
      if (t.kind == Tok::Punct) {
        const char c = t.text[0];
        if (c == '(' || c == '[' || c == '{' || c == '<') {
          stack.push_back(c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
          if (stack.size() > 4096) fail(t, "brackets nested too deeply");
        } else if (c == ')' || c == ']' || c == '}' || c == '>') {
          if (c != stack.back()) fail(t, std::string("mismatched '") + c + "'");
          stack.pop_back();
        }
      }
      ++p_;
    } while (!stack.empty());
  }

  void parse_module() {
    Module m;
    m.line = cur().line;
    ++p_;
    if (cur().kind == Tok::Symbol) m.name = cur().text.substr(1), ++p_;
    if (cur().is("attributes")) {
      ++p_;
      if (!cur().is('{')) fail(cur(), "expected '{' after 'attributes'");
      const size_t begin = p_;
      skip_balanced_one();
      for (size_t k = begin; k + 2 < p_; ++k) {
        const bool parts = t_[k].is("mhlo.num_partitions"), replicas = t_[k].is("mhlo.num_replicas");
        if ((parts || replicas) && t_[k + 1].is('=') && t_[k + 2].kind == Tok::Number) {
          const int64_t v = std::strtoll(std::string(t_[k + 2].text).c_str(), nullptr, 10);
          if (v < 1 || v > (1 << 24)) fail(t_[k + 2], "implausible device count " + std::string(t_[k + 2].text));
          (parts ? m.num_partitions : m.num_replicas) = v;
          m.declares_devices = true;
        }
      }
    }
    expect('{', "to open the module body");
    while (!cur().is('}')) {
      if (cur().kind == Tok::End) fail(cur(), "module '" + std::string(m.name) + "' is not closed");
      if (cur().is("func.func"))
        m.funcs.push_back(parse_func());
      else
        skip_line();  // sdy.mesh, ml_program.global, ...
    }
    ++p_;
    f_.modules.push_back(std::move(m));
  }

  Func parse_func() {
    Func fn;
    fn.line = cur().line;
    ++p_;
    while (cur().is("public") || cur().is("private") || cur().is("nested")) {
      fn.is_public = !cur().is("private");
      ++p_;
    }
    if (cur().kind != Tok::Symbol) fail(cur(), "expected the function's @name");
    fn.name = cur().text.substr(1);
    ++p_;
    expect('(', "to open the parameter list");
    while (!cur().is(')')) {
      if (cur().kind == Tok::Value) {
        fn.body.args.push_back(cur().text);
        ++p_;
        expect(':', "after a parameter name");
      }
      fn.body.arg_types.push_back(parse_one_type());
      if (cur().is('{')) skip_balanced_one();  // argument attributes
      if (cur().is(','))
        ++p_;
      else if (!cur().is(')'))
        fail(cur(), "expected ',' or ')' in the parameter list");
    }
    ++p_;
    if (cur().kind == Tok::Arrow) {
      ++p_;
      if (cur().is('('))
        skip_balanced_one();
      else
        parse_one_type();
    }
    if (cur().is("attributes")) ++p_, skip_balanced_one();
    if (cur().is('{')) {
      fn.has_body = true;
      Region r = parse_region(0, {});
      if (r.blocks.empty()) fail(cur(), "function @" + std::string(fn.name) + " has an empty body");
      fn.body.ops = std::move(r.blocks[0].ops);
    }
    return fn;
  }

  TensorType parse_one_type() {
    const Token& t = cur();
    if (t.kind == Tok::Type || (t.kind == Tok::Ident && is_scalar_type_word(t.text))) {
      ++p_;
      return parse_type(t.text);
    }
    fail(t, "expected a type, found '" + std::string(t.text) + "'");
  }
  bool at_type() const {
    return cur().kind == Tok::Type || (cur().kind == Tok::Ident && is_scalar_type_word(cur().text));
  }
  std::vector<TensorType> parse_type_list_in_parens() {
    std::vector<TensorType> out;
    expect('(', "to open a type list");
    while (!cur().is(')')) {
      out.push_back(parse_one_type());
      if (cur().is('{')) skip_balanced_one();
      if (cur().is(','))
        ++p_;
      else if (!cur().is(')'))
        fail(cur(), "expected ',' or ')' in a type list");
    }
    ++p_;
    return out;
  }

  // `{` starts a region unless it is an attribute dictionary: `{}`, `{key = ...}`, `{key, ...}`,
  // `{key}` or `{"str", ...}`.
  bool brace_is_region() const {
    const Token& a = at(1);
    const Token& b = at(2);
    if (a.is('}')) return false;
    if (a.kind == Tok::Block || a.kind == Tok::Value) return true;
    if (a.kind == Tok::Ident || a.kind == Tok::String) return !(b.is('=') || b.is(',') || b.is('}'));
    return true;
  }

  Region parse_region(size_t depth, std::vector<std::pair<std::string_view, TensorType>> entry_args) {
    if (depth > kMaxNesting) fail(cur(), "regions nested more than " + std::to_string(kMaxNesting) + " deep");
    Region r;
    expect('{', "to open a region");
    r.blocks.emplace_back();
    for (auto& [name, type] : entry_args) r.blocks[0].args.push_back(name), r.blocks[0].arg_types.push_back(type);
    bool first = true;
    while (!cur().is('}')) {
      if (cur().kind == Tok::End) fail(cur(), "region is not closed");
      if (cur().kind == Tok::Block) {  // ^bb0(%a: T, ...):
        if (!first || !r.blocks.back().args.empty() || !r.blocks.back().ops.empty()) r.blocks.emplace_back();
        ++p_;
        if (cur().is('(')) {
          ++p_;
          while (!cur().is(')')) {
            if (cur().kind != Tok::Value) fail(cur(), "expected a block argument");
            r.blocks.back().args.push_back(cur().text);
            ++p_;
            expect(':', "after a block argument");
            r.blocks.back().arg_types.push_back(parse_one_type());
            if (cur().is("loc")) ++p_, skip_balanced_one();
            if (cur().is(','))
              ++p_;
            else if (!cur().is(')'))
              fail(cur(), "expected ',' or ')' after a block argument");
          }
          ++p_;
        }
        expect(':', "after the block label");
      } else {
        r.blocks.back().ops.push_back(parse_op(depth));
      }
      first = false;
    }
    ++p_;
    return r;
  }

  Op parse_op(size_t depth) {
    Op op;
    op.line = cur().line;
    op.col = cur().col;
    if (cur().kind == Tok::Value) {  // results: %a, %b:2 =
      while (true) {
        if (cur().kind != Tok::Value) fail(cur(), "expected a result name");
        std::string_view name = cur().text;
        ++p_;
        int64_t count = 1;
        if (cur().is(':') && at(1).kind == Tok::Number) {
          count = std::strtoll(std::string(at(1).text).c_str(), nullptr, 10);
          if (count < 1 || count > 100000) fail(at(1), "implausible result count");
          p_ += 2;
        }
        if (count == 1) {
          op.results.push_back(name);
        } else {
          for (int64_t k = 0; k < count; ++k) op.results.push_back(intern_result(name, k));
        }
        if (cur().is(',')) {
          ++p_;
          continue;
        }
        expect('=', "after the results");
        break;
      }
    }
    if (cur().kind != Tok::Ident && cur().kind != Tok::String)
      fail(cur(), "expected an op name, found '" + std::string(cur().text) + "'");
    op.name = cur().kind == Tok::String ? cur().text.substr(1, cur().text.size() - 2) : cur().text;
    const uint32_t name_line = cur().line;
    ++p_;
    op.attr_begin = static_cast<uint32_t>(p_);
    op.attr_end = 0;
    auto close_attrs = [&] {
      if (op.attr_end == 0) op.attr_end = static_cast<uint32_t>(p_);
    };
    std::vector<std::pair<std::string_view, TensorType>> pending_args;  // (%x: T) before a region
    std::vector<std::string_view> bindings;                             // while(%iterArg = %init)
    auto region = [&] {
      close_attrs();
      if (pending_args.empty() && !bindings.empty() && op.result_types.size() == bindings.size())
        for (size_t k = 0; k < bindings.size(); ++k) pending_args.emplace_back(bindings[k], op.result_types[k]);
      op.regions.push_back(parse_region(depth + 1, std::move(pending_args)));
      pending_args.clear();
    };
    bool signed_off = false;  // the type signature has been read
    while (true) {
      const Token& t = cur();
      if (t.kind == Tok::End || t.is('}') || t.kind == Tok::Separator) break;
      const bool continuation = t.is("cond") || t.is("do") || t.is("reducer");
      // A new line at depth 0 ends the op, unless a while or a reducer continues there.
      if (t.line_start && t.line != name_line && !continuation && !t.is(':')) break;
      if (t.is("loc") && at(1).is('(')) {
        ++p_;
        skip_balanced_one();
      } else if (continuation) {
        ++p_;
      } else if (t.is('{') && (signed_off || brace_is_region())) {
        region();
      } else if (t.is('(') && at(1).is('{')) {  // generic regions: ({...}, {...})
        close_attrs();
        ++p_;
        while (true) {
          op.regions.push_back(parse_region(depth + 1, {}));
          if (!cur().is(',')) break;
          ++p_;
        }
        expect(')', "after the regions");
      } else if (t.is('(')) {
        parse_paren_group(op, pending_args, bindings, signed_off);
      } else if (signed_off) {
        break;
      } else if (t.kind == Tok::Value) {
        op.operands.push_back(t.text);
        ++p_;
      } else if (t.kind == Tok::Symbol) {
        if (op.callee.empty()) op.callee = t.text.substr(1);
        ++p_;
      } else if (t.is('{') || t.is('[') || t.is('<')) {
        skip_balanced_one();
      } else if (t.is(':')) {
        close_attrs();
        ++p_;
        parse_signature(op);
        signed_off = true;
      } else {
        ++p_;
      }
    }
    close_attrs();
    return op;
  }

  // `(...)` inside an op: operands, `%x = %init` bindings (while) or `%x: T` block arguments
  // of the region that follows (manual_computation, reducer).
  void parse_paren_group(Op& op, std::vector<std::pair<std::string_view, TensorType>>& pending_args,
                         std::vector<std::string_view>& bindings, bool signed_off) {
    ++p_;
    int depth = 1;
    while (depth > 0) {
      const Token& t = cur();
      if (t.kind == Tok::End) fail(t, "unbalanced '('");
      if (t.kind == Tok::Value && at(1).is(':') && at(2).kind != Tok::Number) {
        std::string_view name = t.text;
        p_ += 2;
        pending_args.emplace_back(name, parse_one_type());
        continue;
      }
      if (t.kind == Tok::Value && at(1).is('=')) {  // while(%iterArg = %init)
        bindings.push_back(t.text);
        p_ += 2;
        continue;
      }
      if (t.kind == Tok::Value && !signed_off)
        op.operands.push_back(t.text);
      else if (t.kind == Tok::Symbol && op.callee.empty())
        op.callee = t.text.substr(1);
      else if (t.is('(') || t.is('[') || t.is('{'))
        ++depth;
      else if (t.is(')') || t.is(']') || t.is('}'))
        --depth;
      ++p_;
    }
  }

  void parse_signature(Op& op) {
    if (cur().is('(')) {
      op.operand_types = parse_type_list_in_parens();
      if (cur().kind == Tok::Arrow) {
        ++p_;
        if (cur().is('('))
          op.result_types = parse_type_list_in_parens();
        else
          op.result_types.push_back(parse_one_type());
      }
      return;
    }
    std::vector<TensorType> types;
    types.push_back(parse_one_type());
    while (cur().is(',') &&
           (at(1).kind == Tok::Type || (at(1).kind == Tok::Ident && is_scalar_type_word(at(1).text)))) {
      ++p_;
      types.push_back(parse_one_type());
    }
    if (types.size() == op.results.size())
      op.result_types = types;
    else if (!op.results.empty())
      op.result_types.assign(op.results.size(), types.back());
    if (op.results.empty()) op.operand_types = std::move(types);  // return %a, %b : T1, T2
  }

  // "%0#1" for the second result of "%0:2"; kept in the file so views stay valid.
  std::string_view intern_result(std::string_view base, int64_t k) {
    names_.push_back(std::make_unique<std::string>(std::string(base) + "#" + std::to_string(k)));
    return *names_.back();
  }

 public:
  std::vector<std::unique_ptr<std::string>> names_;

 private:
  File& f_;
  const std::vector<Token>& t_;
  size_t p_ = 0;
};

}  // namespace

TensorType parse_type(std::string_view text) {
  TensorType t;
  auto element = [&](std::string_view e) {
    while (!e.empty() && e.front() == ' ') e.remove_prefix(1);
    const size_t comma = e.find(',');  // tensor<4xf32, #encoding>
    if (comma != std::string_view::npos) e = e.substr(0, comma);
    while (!e.empty() && e.back() == ' ') e.remove_suffix(1);
    t.dtype = std::string(e);
    if (e.substr(0, 8) == "complex<") {
      TensorType inner = parse_type(e.substr(8, e.size() - 9));
      t.bits = inner.bits * 2;
    } else if (e.substr(0, 14) == "!quant.uniform") {
      const size_t lt = e.find('<');
      size_t k = lt + 1;
      while (k < e.size() && !std::isdigit(static_cast<unsigned char>(e[k]))) ++k;
      t.bits = static_cast<uint32_t>(std::strtoul(std::string(e.substr(k)).c_str(), nullptr, 10));
    } else if (e == "index") {
      t.bits = 64;
    } else {
      size_t k = 0;
      while (k < e.size() && !std::isdigit(static_cast<unsigned char>(e[k]))) ++k;
      t.bits = static_cast<uint32_t>(std::strtoul(std::string(e.substr(k)).c_str(), nullptr, 10));
    }
    if (t.bits == 1) t.bits = 8;  // i1 is stored as a byte
  };
  if (text.substr(0, 7) == "tensor<" || text.substr(0, 7) == "vector<" || text.substr(0, 7) == "memref<") {
    std::string_view body = text.substr(7, text.size() - 8);
    if (body == "*xf32" || body.substr(0, 2) == "*x") {  // unranked
      t.dynamic = true;
      element(body.substr(2));
      return t;
    }
    size_t k = 0;
    while (true) {
      size_t d = k;
      while (d < body.size() && (std::isdigit(static_cast<unsigned char>(body[d])) || body[d] == '?')) ++d;
      if (d == k || d >= body.size() || body[d] != 'x') break;
      if (body[k] == '?') {
        t.dynamic = true;
        t.dims.push_back(1);
      } else {
        t.dims.push_back(std::strtoll(std::string(body.substr(k, d - k)).c_str(), nullptr, 10));
      }
      k = d + 1;
    }
    element(body.substr(k));
  } else if (text.substr(0, 6) == "tuple<") {
    t.dtype = "tuple";
    t.tuple_bytes = 0;
    std::string_view body = text.substr(6, text.size() - 7);
    int depth = 0;
    size_t start = 0;
    for (size_t k = 0; k <= body.size(); ++k) {
      if (k == body.size() || (body[k] == ',' && depth == 0)) {
        std::string_view member = body.substr(start, k - start);
        while (!member.empty() && member.front() == ' ') member.remove_prefix(1);
        if (!member.empty()) {
          const double b = parse_type(member).bytes();
          t.tuple_bytes += b > 0 ? b : 0;
        }
        start = k + 1;
      } else if (body[k] == '<') {
        ++depth;
      } else if (body[k] == '>') {
        --depth;
      }
    }
  } else if (text.substr(0, 1) == "!") {
    t.dtype = std::string(text);  // !stablehlo.token, async bundles: no bytes
  } else {
    element(text);  // a scalar type word
  }
  return t;
}

uint32_t find_attr(const File& f, const Op& op, std::string_view key) {
  for (uint32_t k = op.attr_begin; k + 1 < op.attr_end; ++k)
    if (f.tokens[k].kind == Tok::Ident && f.tokens[k].text == key &&
        (f.tokens[k + 1].is('=') || f.tokens[k + 1].is(':')))
      return k + 2;
  return 0;
}

bool has_word(const File& f, const Op& op, std::string_view word) {
  for (uint32_t k = op.attr_begin; k < op.attr_end; ++k)
    if (f.tokens[k].kind == Tok::Ident && f.tokens[k].text == word) return true;
  return false;
}

std::vector<int64_t> literal_shape(const File& f, const Op& op, uint32_t at) {
  for (uint32_t k = at; at && k < op.attr_end; ++k)
    if (f.tokens[k].kind == Tok::Type) return parse_type(f.tokens[k].text).dims;
  return {};
}

std::vector<int64_t> int_list(const File& f, uint32_t at) {
  std::vector<int64_t> out;
  if (at == 0) return out;
  const std::vector<Token>& t = f.tokens;
  uint32_t k = at;
  if (t[k].is("array") || t[k].is("dense")) {  // array<i64: 1, 2>, dense<[[0, 1]]>
    ++k;
    if (!t[k].is('<')) return out;
    ++k;
    if (t[k].kind == Tok::Ident && t[k + 1].is(':')) k += 2;
  }
  int depth = 0;
  for (; k < t.size(); ++k) {
    if (t[k].is('[')) {
      ++depth;
    } else if (t[k].is(']')) {
      if (--depth <= 0) break;
    } else if (t[k].kind == Tok::Number) {
      out.push_back(std::strtoll(std::string(t[k].text).c_str(), nullptr, 0));
      if (depth == 0) break;  // splat: dense<0>
    } else if (t[k].is('>') || t[k].kind == Tok::End) {
      break;
    }
  }
  return out;
}

std::unique_ptr<File> parse(std::string text, const std::string& name) {
  auto f = std::make_unique<File>();
  f->name = name;
  f->text = std::move(text);
  if (f->text.size() >= 4 && f->text.compare(0, 4,
                                             "ML\xef"
                                             "R") == 0)
    throw Error(name +
                ": this is MLIR bytecode (.mlirbc), not text; print it as text first, e.g. "
                "`stablehlo-translate --deserialize " +
                name + "` or `lowered.as_text()` in JAX");
  if (f->text.find('\0') != std::string::npos) throw Error(name + ": contains NUL bytes; expected StableHLO text");
  Lexer(f->text, name, f->tokens).run();
  Parser p(*f);
  p.run();
  f->owned_names = std::move(p.names_);
  return f;
}

}  // namespace chakra::stablehlo::ir
