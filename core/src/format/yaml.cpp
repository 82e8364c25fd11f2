#include "chakra/format/yaml.h"

#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra {

namespace {

using json = nlohmann::ordered_json;

struct Line {
  size_t number = 0;  // 1-based, for messages
  size_t indent = 0;
  std::string text;  // without indentation, comment and trailing blanks
};

class YamlReader {
 public:
  YamlReader(std::string_view text, const std::string& name) : name_(name) { split(text); }

  json document() {
    if (lines_.empty()) return json();
    size_t i = 0;
    json v = block(i, lines_[0].indent);
    if (i < lines_.size()) fail(lines_[i], "unexpected indentation (or a second value at the top level)");
    return v;
  }

 private:
  [[noreturn]] void fail(const Line& l, const std::string& what) const {
    throw Error(name_ + ": line " + std::to_string(l.number) + ": " + what);
  }
  [[noreturn]] void fail_at(size_t number, const std::string& what) const {
    throw Error(name_ + ": line " + std::to_string(number) + ": " + what);
  }

  void split(std::string_view text) {
    size_t number = 0, pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view raw = text.substr(pos, end - pos);
      pos = end + 1;
      ++number;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      size_t indent = 0;
      while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) {
        if (raw[indent] == '\t') {
          const std::string_view rest = raw.substr(indent);
          if (rest.find_first_not_of(" \t") != std::string_view::npos && rest[rest.find_first_not_of(" \t")] != '#')
            fail_at(number, "a tab in the indentation (YAML indents with spaces)");
        }
        ++indent;
      }
      std::string body(strip_comment(raw.substr(indent), number));
      while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.pop_back();
      if (body.empty()) continue;
      if (body == "---" && lines_.empty()) continue;
      if (body == "---" || body == "...") fail_at(number, "a second document ('" + body + "') is not supported");
      if (body[0] == '&' || body[0] == '*' || body[0] == '!' || body[0] == '|' || body[0] == '>')
        fail_at(number, "anchors, aliases, tags and block scalars are not supported");
      lines_.push_back({number, indent, std::move(body)});
      if (pos > text.size()) break;
    }
  }

  // The text before a comment: a '#' at the start or after a blank, outside quotes.
  std::string_view strip_comment(std::string_view s, size_t number) const {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (quote) {
        if (c == '\\' && quote == '"')
          ++i;
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
        return s.substr(0, i);
      }
    }
    if (quote) fail_at(number, "a quoted string is not closed on its line");
    return s;
  }

  static bool is_item(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

  // Where "key: value" splits (the colon is followed by a blank or ends the text, outside
  // quotes and brackets); npos when the text is not a mapping entry.
  static size_t mapping_colon(std::string_view t) {
    char quote = 0;
    int depth = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (quote) {
        if (c == '\\' && quote == '"')
          ++i;
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        --depth;
      } else if (c == ':' && depth == 0 && (i + 1 == t.size() || t[i + 1] == ' ')) {
        return i;
      }
    }
    return std::string_view::npos;
  }

  // The value of the lines from `i` at indentation `indent`: a sequence or a mapping.
  json block(size_t& i, size_t indent) {
    if (++block_depth_ > kMaxDepth)
      fail(lines_[i], "blocks nested deeper than " + std::to_string(kMaxDepth) + " levels");
    json out = block_body(i, indent);
    --block_depth_;
    return out;
  }

  json block_body(size_t& i, size_t indent) {
    if (is_item(lines_[i].text)) return sequence(i, indent);
    return mapping(i, indent);
  }

  json sequence(size_t& i, size_t indent) {
    json out = json::array();
    while (i < lines_.size() && lines_[i].indent == indent && is_item(lines_[i].text)) {
      Line& l = lines_[i];
      const std::string item = l.text.size() > 1 ? trimmed(l.text.substr(2)) : "";
      if (item.empty()) {
        ++i;
        if (i < lines_.size() && lines_[i].indent > indent)
          out.push_back(block(i, lines_[i].indent));
        else
          out.push_back(nullptr);
      } else if (item[0] != '[' && item[0] != '{' && mapping_colon(item) != std::string::npos) {
        // "- key: value" opens a mapping whose entries line up with `key`.
        const size_t column = indent + (l.text.size() - item.size());
        l.indent = column;
        l.text = item;
        out.push_back(mapping(i, column));
      } else {
        out.push_back(inline_value(item, l));
        ++i;
      }
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i], "unexpected indentation");
    return out;
  }

  json mapping(size_t& i, size_t indent) {
    json out = json::object();
    while (i < lines_.size() && lines_[i].indent == indent && !is_item(lines_[i].text)) {
      const Line& l = lines_[i];
      const size_t colon = mapping_colon(l.text);
      if (colon == std::string::npos) fail(l, "expected 'key: value' or '- item', got " + quoted_excerpt(l.text));
      const json key = inline_value(trimmed(l.text.substr(0, colon)), l);
      const std::string k =
          key.is_string() ? key.get<std::string>() : key.dump(-1, ' ', false, json::error_handler_t::replace);
      if (k.empty()) fail(l, "an empty key");
      if (out.contains(k)) fail(l, "key " + quoted_excerpt(k) + " given twice");
      const std::string rest = trimmed(l.text.substr(colon + 1));
      ++i;
      if (!rest.empty()) {
        out[k] = inline_value(rest, l);
      } else if (i < lines_.size() && lines_[i].indent > indent) {
        out[k] = block(i, lines_[i].indent);
      } else if (i < lines_.size() && lines_[i].indent == indent && is_item(lines_[i].text)) {
        out[k] = sequence(i, indent);  // "key:" then "- item" at the key's own indentation
      } else {
        out[k] = nullptr;
      }
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i], "unexpected indentation");
    return out;
  }

  static std::string trimmed(std::string_view s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
  }

  // ---- one line's value: a flow collection or a scalar
  json inline_value(const std::string& text, const Line& l) {
    if (!text.empty() && (text[0] == '&' || text[0] == '*' || text[0] == '!' || text[0] == '|' || text[0] == '>'))
      fail(l, "anchors, aliases, tags and block scalars are not supported");
    size_t pos = 0;
    json v = flow(text, pos, l, false);
    skip_blanks(text, pos);
    if (pos != text.size()) fail(l, "unexpected " + quoted_excerpt(text.substr(pos)) + " after a value");
    return v;
  }

  static void skip_blanks(std::string_view t, size_t& pos) {
    while (pos < t.size() && (t[pos] == ' ' || t[pos] == '\t')) ++pos;
  }

  json flow(std::string_view t, size_t& pos, const Line& l, bool nested) {
    skip_blanks(t, pos);
    if (pos == t.size()) {
      if (nested) fail(l, "a value is missing");
      return json();
    }
    if (t[pos] == '[' || t[pos] == '{') {
      // Each level is a call: a cap keeps a hostile line from exhausting the stack.
      if (++flow_depth_ > kMaxDepth)
        fail(l, "flow collections nested deeper than " + std::to_string(kMaxDepth) + " levels");
      const bool list = t[pos] == '[';
      const char close = list ? ']' : '}';
      json out = list ? json::array() : json::object();
      ++pos;
      skip_blanks(t, pos);
      if (pos < t.size() && t[pos] == close) return --flow_depth_, ++pos, out;
      while (true) {
        if (list) {
          out.push_back(flow(t, pos, l, true));
        } else {
          const json key = flow_scalar(t, pos, l, true);
          skip_blanks(t, pos);
          if (pos >= t.size() || t[pos] != ':') fail(l, "expected ':' after a key in {...}");
          ++pos;
          const std::string k =
              key.is_string() ? key.get<std::string>() : key.dump(-1, ' ', false, json::error_handler_t::replace);
          if (out.contains(k)) fail(l, "key " + quoted_excerpt(k) + " given twice");
          out[k] = flow(t, pos, l, true);
        }
        skip_blanks(t, pos);
        if (pos >= t.size()) fail(l, std::string("'") + close + "' is missing (flow collections stay on one line)");
        if (t[pos] == close) return --flow_depth_, ++pos, out;
        if (t[pos] != ',')
          fail(l, std::string("expected ',' or '") + close + "', got " + quoted_excerpt(t.substr(pos)));
        ++pos;
      }
    }
    return flow_scalar(t, pos, l, nested);
  }

  json flow_scalar(std::string_view t, size_t& pos, const Line& l, bool nested) {
    skip_blanks(t, pos);
    if (pos < t.size() && (t[pos] == '"' || t[pos] == '\'')) return quoted(t, pos, l);
    // A plain scalar runs to the end, or inside [...] and {...} to the next ',', ']', '}' or ': '.
    const size_t start = pos;
    while (pos < t.size()) {
      const char c = t[pos];
      if (nested && (c == ',' || c == ']' || c == '}')) break;
      if (nested && c == ':' && (pos + 1 == t.size() || t[pos + 1] == ' ')) break;
      ++pos;
    }
    return plain(trimmed(t.substr(start, pos - start)));
  }

  json quoted(std::string_view t, size_t& pos, const Line& l) {
    const char q = t[pos++];
    std::string raw;
    while (pos < t.size() && t[pos] != q) {
      if (q == '\'' || t[pos] != '\\') {
        raw += t[pos++];
        continue;
      }
      raw += t[pos++];
      if (pos < t.size()) raw += t[pos++];
    }
    if (pos >= t.size()) fail(l, "a quoted string is not closed");
    ++pos;
    if (q == '\'') return raw;
    try {
      return json::parse("\"" + raw + "\"");  // the JSON escapes
    } catch (const json::exception&) {
      fail(l, "a bad escape in " + quoted_excerpt(raw));
    }
  }

  static json plain(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    const char* b = s.c_str();
    char* end = nullptr;
    const bool digits =
        s.find_first_not_of("+-0123456789") == std::string::npos && s.find_first_of("0123456789") != std::string::npos;
    if (digits) {
      errno = 0;
      const long long v = std::strtoll(b, &end, 10);
      if (errno == 0 && end == b + s.size()) return v;
    }
    if (s.find_first_not_of("+-0123456789.eE") == std::string::npos &&
        s.find_first_of("0123456789") != std::string::npos) {
      const double v = std::strtod(b, &end);
      if (end == b + s.size() && std::isfinite(v)) return v;  // 1e999 stays text: JSON has no infinity
    }
    return s;
  }

  static constexpr int kMaxDepth = 256;  // of blocks and of flow collections: far past any config
  std::string name_;
  std::vector<Line> lines_;
  int flow_depth_ = 0;
  int block_depth_ = 0;
};

}  // namespace

nlohmann::ordered_json parse_yaml(std::string_view text, const std::string& name) {
  return YamlReader(text, name).document();
}

}  // namespace chakra
