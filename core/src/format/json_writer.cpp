#include "chakra/format/json_writer.h"

#include "chakra/support/text.h"

namespace chakra {

JsonWriter::JsonWriter(ByteSink& sink, JsonStyle style)
    : sink_(sink), style_(style), item_sep_(style.item_sep), key_sep_(style.key_sep) {
  buf_.reserve((1 << 20) + 4096);
  separator_.assign(item_sep_);
  if (style_.indent) separator_ += '\n';
}

// Appends the item separator (if `with_item_sep`) and, when indenting, a newline and the
// indentation of the current depth, in one append of a prefix of separator_.
void JsonWriter::separate(bool with_item_sep) {
  size_t len = item_sep_.size();
  if (style_.indent) {
    len += 1 + has_items_.size() * static_cast<size_t>(style_.indent);
    if (separator_.size() < len) separator_.resize(len * 2, ' ');
  }
  const size_t skip = with_item_sep ? 0 : item_sep_.size();
  buf_.append(separator_.data() + skip, len - skip);
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_items_.empty()) return;
  separate(has_items_.back());
  has_items_.back() = 1;
}

void JsonWriter::open(char c) {
  before_value();
  buf_ += c;
  has_items_.push_back(0);
}

void JsonWriter::close(char c) {
  const bool had_items = has_items_.back();
  has_items_.pop_back();
  if (had_items && style_.indent) separate(false);
  buf_ += c;
  maybe_flush();
}

JsonWriter& JsonWriter::begin_object() { open('{'); return *this; }
JsonWriter& JsonWriter::end_object() { close('}'); return *this; }
JsonWriter& JsonWriter::begin_array() { open('['); return *this; }
JsonWriter& JsonWriter::end_array() { close(']'); return *this; }

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  append_json_string(buf_, k, style_.ascii_only);
  buf_ += key_sep_;
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  append_json_string(buf_, s, style_.ascii_only);
  maybe_flush();
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  buf_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value_int(int64_t v) {
  before_value();
  append_int(buf_, v);
  return *this;
}

JsonWriter& JsonWriter::value_uint(uint64_t v) {
  before_value();
  append_uint(buf_, v);
  return *this;
}

JsonWriter& JsonWriter::value_double(double v) {
  before_value();
  append_json_double(buf_, v);
  return *this;
}

JsonWriter& JsonWriter::value_null() {
  before_value();
  buf_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value_raw(std::string_view json) {
  before_value();
  buf_ += json;
  maybe_flush();
  return *this;
}

void JsonWriter::raw(std::string_view text) {
  buf_ += text;
  maybe_flush();
}

void JsonWriter::flush() {
  sink_.write(buf_);
  buf_.clear();
}

}  // namespace chakra
