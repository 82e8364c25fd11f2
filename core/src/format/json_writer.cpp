#include "chakra/format/json_writer.h"

#include <charconv>

#include "chakra/support/text.h"

namespace chakra {

JsonWriter::JsonWriter(ByteSink& sink, JsonStyle style)
    : sink_(sink),
      style_(style),
      item_sep_(style.item_sep),
      key_sep_(style.key_sep),
      buf_(new char[kFlushAt]),
      capacity_(kFlushAt) {
  separator_.assign(item_sep_);
  if (style_.indent) separator_ += '\n';
}

void JsonWriter::make_room(size_t n) {
  flush();
  if (n > capacity_) {
    buf_.reset(new char[n]);
    capacity_ = n;
  }
}

void JsonWriter::put_string(std::string_view s) {
  if (json_plain_prefix(s) == s.size()) {
    put_plain_string(s);
    return;
  }
  scratch_.clear();
  append_json_string(scratch_, s, style_.ascii_only);
  put(scratch_);
}

void JsonWriter::put_plain_string(std::string_view s) {
  char* p = room(s.size() + 2);
  p[0] = '"';
  copy_bytes(p + 1, s.data(), s.size());
  p[s.size() + 1] = '"';
  used_ += s.size() + 2;
}

// Writes the item separator (if `with_item_sep`) and, when indenting, a newline and the
// indentation of the current depth, as one prefix of separator_.
void JsonWriter::separate(bool with_item_sep) {
  size_t len = item_sep_.size();
  if (style_.indent) {
    len += 1 + has_items_.size() * static_cast<size_t>(style_.indent);
    if (separator_.size() < len) separator_.resize(len * 2, ' ');
  }
  const size_t skip = with_item_sep ? 0 : item_sep_.size();
  put(std::string_view(separator_.data() + skip, len - skip));
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
  *room(1) = c;
  ++used_;
  has_items_.push_back(0);
}

void JsonWriter::close(char c) {
  const bool had_items = has_items_.back();
  has_items_.pop_back();
  if (had_items && style_.indent) separate(false);
  *room(1) = c;
  ++used_;
}

JsonWriter& JsonWriter::begin_object() {
  open('{');
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  open('[');
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  put_string(k);
  put(key_sep_);
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  put_string(s);
  return *this;
}

JsonWriter& JsonWriter::value_plain(std::string_view s) {
  before_value();
  put_plain_string(s);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  put(b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value_int(int64_t v) {
  before_value();
  char* p = room(24);
  used_ = static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - buf_.get());
  return *this;
}

JsonWriter& JsonWriter::value_uint(uint64_t v) {
  before_value();
  char* p = room(24);
  used_ = static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - buf_.get());
  return *this;
}

JsonWriter& JsonWriter::value_double(double v) {
  before_value();
  scratch_.clear();
  append_json_double(scratch_, v);
  put(scratch_);
  return *this;
}

JsonWriter& JsonWriter::value_null() {
  before_value();
  put("null");
  return *this;
}

JsonWriter& JsonWriter::value_raw(std::string_view json) {
  before_value();
  put(json);
  return *this;
}

void JsonWriter::raw(std::string_view text) { put(text); }

void JsonWriter::flush() {
  sink_.write(buf_.get(), used_);
  used_ = 0;
}

}  // namespace chakra
