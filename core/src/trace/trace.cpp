#include "chakra/trace/trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "chakra/support/error.h"
#include "chakra/support/progress.h"

namespace chakra {

uint64_t bits_of_double(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}
uint64_t bits_of_float(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
double double_of_bits(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
float float_of_bits(uint64_t bits) {
  uint32_t b = static_cast<uint32_t>(bits);
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

namespace {

// Offsets are 32-bit to keep columns small; a single trace never approaches 4 G entries.
uint32_t checked_offset(size_t n, const char* what) {
  if (n >= std::numeric_limits<uint32_t>::max())
    throw Error(std::string("trace too large: more than 4294967294 ") + what);
  return static_cast<uint32_t>(n);
}

using UnknownIndex = std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>>;

void store_unknown(UnknownIndex& index, std::string& blob, uint32_t owner, std::string_view bytes) {
  if (bytes.empty()) return;
  uint32_t begin = checked_offset(blob.size(), "bytes of unknown fields");
  blob.append(bytes);
  checked_offset(blob.size(), "bytes of unknown fields");
  index.push_back({owner, {begin, static_cast<uint32_t>(bytes.size())}});
}

std::string_view lookup_unknown(const UnknownIndex& index, const std::string& blob, uint32_t owner) {
  // Owners are appended in increasing order, so the index is sorted.
  auto it = std::lower_bound(index.begin(), index.end(), owner, [](const auto& e, uint32_t o) { return e.first < o; });
  if (it == index.end() || it->first != owner) return {};
  return std::string_view(blob).substr(it->second.first, it->second.second);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

AttrDraft& AttrDrafts::add_list(StrId name, AttrKind kind, std::span<const uint64_t> values) {
  AttrDraft& a = add(name, kind, 0);
  a.list_begin = static_cast<uint32_t>(elems.size());
  a.list_len = static_cast<uint32_t>(values.size());
  elems.insert(elems.end(), values.begin(), values.end());
  return a;
}

void NodeDraft::clear() {
  id = 0;
  name = StringPool::kEmpty;
  type = 0;
  start_time_micros = 0;
  duration_micros = 0;
  ctrl_deps.clear();
  data_deps.clear();
  ctrl_deps_unpacked = data_deps_unpacked = false;
  has_inputs = has_outputs = false;
  inputs = outputs = IoStrings{};
  attrs.clear();
  unknown.clear();
}

// ---------------------------------------------------------------------------------------------

std::string_view AttrTable::unknown_fields(uint32_t a) const {
  return unknown_.empty() ? std::string_view{} : lookup_unknown(unknown_, unknown_blob_, a);
}

uint32_t AttrTable::append(const AttrDrafts& d) {
  const uint32_t first = size();
  checked_offset(size_t{first} + d.attrs.size(), "attributes");
  for (const AttrDraft& a : d.attrs) {
    const uint32_t index = size();
    name_.push_back(a.name);
    doc_.push_back(a.doc);
    kind_.push_back(a.kind);
    if (is_list(a.kind)) {
      const uint32_t begin = checked_offset(list_pool_.size(), "attribute list elements");
      list_pool_.append(std::span(d.elems).subspan(a.list_begin, a.list_len));
      checked_offset(list_pool_.size(), "attribute list elements");
      bits_.push_back(begin | (uint64_t{a.list_len} << 32));
    } else {
      bits_.push_back(a.bits);
    }
    if (a.unknown_len)
      store_unknown(unknown_, unknown_blob_, index, std::string_view(d.unknown).substr(a.unknown_begin, a.unknown_len));
  }
  return first;
}

void AttrTable::reserve(size_t attrs, size_t list_elems) {
  name_.reserve(attrs);
  doc_.reserve(attrs);
  kind_.reserve(attrs);
  bits_.reserve(attrs);
  list_pool_.reserve(list_elems);
}

namespace {
// Nothing for a factor of 1 or less, or one not finite.
template <class T>
void reserve_scaled_column(Column<T>& c, double factor) {
  if (factor > 1 && std::isfinite(factor)) c.reserve(static_cast<size_t>(static_cast<double>(c.size()) * factor) + 1);
}
}  // namespace

void AttrTable::reserve_scaled(double factor) {
  for (auto* c : {&name_, &doc_}) reserve_scaled_column(*c, factor);
  reserve_scaled_column(kind_, factor);
  reserve_scaled_column(bits_, factor);
  reserve_scaled_column(list_pool_, factor);
}

void AttrTable::clear() {
  name_.clear();
  doc_.clear();
  kind_.clear();
  bits_.clear();
  list_pool_.clear();
  unknown_.clear();
  unknown_blob_.clear();
}

size_t AttrTable::memory_bytes() const {
  return name_.capacity() * sizeof(StrId) + doc_.capacity() * sizeof(StrId) + kind_.capacity() + bits_.capacity() * 8 +
         list_pool_.capacity() * 8 + unknown_blob_.capacity() + unknown_.capacity() * sizeof(unknown_[0]);
}

// ---------------------------------------------------------------------------------------------

std::string_view AttrView::name() const { return trace_->str(table_->name(index_)); }
std::string_view AttrView::doc() const { return trace_->str(table_->doc(index_)); }

std::optional<int64_t> AttrView::as_int64() const {
  const AttrKind k = kind();
  if (k == AttrKind::Bool) return static_cast<int64_t>(bits());
  if (!is_integer(k)) return std::nullopt;
  if (is_unsigned(k) && bits() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(bits());
}

std::optional<uint64_t> AttrView::as_uint64() const {
  const AttrKind k = kind();
  if (k == AttrKind::Bool) return bits();
  if (!is_integer(k)) return std::nullopt;
  if (!is_unsigned(k) && static_cast<int64_t>(bits()) < 0) return std::nullopt;
  return bits();
}

std::optional<double> AttrView::as_double() const {
  switch (kind()) {
    case AttrKind::Double: return double_of_bits(bits());
    case AttrKind::Float: return float_of_bits(bits());
    default: break;
  }
  if (!is_integer(kind())) return std::nullopt;
  return is_unsigned(kind()) ? static_cast<double>(bits()) : static_cast<double>(static_cast<int64_t>(bits()));
}

std::optional<bool> AttrView::as_bool() const {
  if (kind() != AttrKind::Bool) return std::nullopt;
  return bits() != 0;
}

std::optional<std::string_view> AttrView::as_string() const {
  if (!is_text(kind())) return std::nullopt;
  return trace_->str(static_cast<StrId>(bits()));
}

// ---------------------------------------------------------------------------------------------

void Trace::set_metadata(StrId version, const AttrDrafts& attrs, std::string_view unknown) {
  clear_metadata();
  has_metadata_ = true;
  metadata_version_ = version;
  metadata_attrs_.append(attrs);
  metadata_unknown_.assign(unknown);
}

void Trace::set_metadata_string(std::string_view name, std::string_view value) {
  replace_metadata(name, AttrKind::String, intern(value));
}

void Trace::set_metadata_uint64(std::string_view name, uint64_t value) {
  replace_metadata(name, AttrKind::Uint64, value);
}

void Trace::remove_metadata(std::string_view name) {
  if (has_metadata_) replace_metadata(name, AttrKind::None, 0);
}

void Trace::replace_metadata(std::string_view name, AttrKind kind, uint64_t bits) {
  const StrId key = intern(name);
  AttrDrafts drafts;
  const AttrTable& table = metadata_attrs_;
  for (uint32_t a = 0; a < table.size(); ++a) {
    if (table.name(a) == key) continue;
    AttrDraft& d = is_list(table.kind(a)) ? drafts.add_list(table.name(a), table.kind(a), table.list(a))
                                          : drafts.add(table.name(a), table.kind(a), table.bits(a));
    d.doc = table.doc(a);
    if (const std::string_view unknown = table.unknown_fields(a); !unknown.empty()) {
      d.unknown_begin = static_cast<uint32_t>(drafts.unknown.size());
      d.unknown_len = static_cast<uint32_t>(unknown.size());
      drafts.unknown += unknown;
    }
  }
  if (kind != AttrKind::None) drafts.add(key, kind, bits);
  const std::string unknown = metadata_unknown_;
  set_metadata(metadata_version_, drafts, unknown);
}

void Trace::clear_metadata() {
  has_metadata_ = false;
  metadata_version_ = StringPool::kEmpty;
  metadata_attrs_ = AttrTable();
  metadata_unknown_.clear();
}

uint32_t Trace::append(const NodeDraft& d) {
  const uint32_t n = checked_offset(id_.size(), "nodes");
  id_.push_back(d.id);
  name_.push_back(d.name);
  type_.push_back(d.type);
  start_.push_back(d.start_time_micros);
  duration_.push_back(d.duration_micros);
  ctrl_.append(d.ctrl_deps);
  data_.append(d.data_deps);
  ctrl_off_.push_back(checked_offset(ctrl_.size(), "control dependencies"));
  data_off_.push_back(checked_offset(data_.size(), "data dependencies"));
  flags_.push_back(static_cast<uint8_t>((d.has_inputs ? kHasInputs : 0) | (d.has_outputs ? kHasOutputs : 0) |
                                        (d.ctrl_deps_unpacked ? kCtrlUnpacked : 0) |
                                        (d.data_deps_unpacked ? kDataUnpacked : 0)));
  inputs_.push_back(d.inputs);
  outputs_.push_back(d.outputs);
  attrs_.append(d.attrs);
  attr_off_.push_back(attrs_.size());
  store_unknown(unknown_, unknown_blob_, n, d.unknown);
  return n;
}

void Trace::add_data_deps(std::span<const std::pair<uint32_t, uint64_t>> extra) {
  if (extra.empty()) return;
  std::vector<uint32_t> count(size() + 1, 0);
  for (const auto& [n, id] : extra) ++count[n + 1];
  for (uint32_t n = 0; n < size(); ++n) count[n + 1] += count[n];  // count[n]: extra deps of nodes before n
  std::vector<uint32_t> fill(count.begin(), count.end() - 1);
  std::vector<uint64_t> added(extra.size());
  for (const auto& [n, id] : extra) added[fill[n]++] = id;
  Column<uint64_t> data;
  Column<uint32_t> off;
  data.reserve(data_.size() + extra.size());
  off.reserve(size() + 1);
  off.push_back(0);
  for (uint32_t n = 0; n < size(); ++n) {
    data.append(data_deps(n));
    data.append(std::span<const uint64_t>(added.data() + count[n], count[n + 1] - count[n]));
    off.push_back(checked_offset(data.size(), "data dependencies"));
  }
  data_ = std::move(data);
  data_off_ = std::move(off);
}

void Trace::clear_nodes() {
  for (Column<uint64_t>* c : {&id_, &start_, &duration_, &ctrl_, &data_}) c->clear();
  for (Column<uint32_t>* c : {&ctrl_off_, &data_off_, &attr_off_}) c->assign(1, 0);
  name_.clear();
  type_.clear();
  flags_.clear();
  inputs_.clear();
  outputs_.clear();
  attrs_.clear();
  unknown_.clear();
  unknown_blob_.clear();
}

void Trace::reserve_scaled(double factor) {
  reserve_scaled_column(id_, factor);
  reserve_scaled_column(name_, factor);
  reserve_scaled_column(type_, factor);
  reserve_scaled_column(start_, factor);
  reserve_scaled_column(duration_, factor);
  for (auto* c : {&ctrl_off_, &data_off_, &attr_off_}) reserve_scaled_column(*c, factor);
  for (auto* c : {&ctrl_, &data_}) reserve_scaled_column(*c, factor);
  reserve_scaled_column(flags_, factor);
  for (auto* c : {&inputs_, &outputs_}) reserve_scaled_column(*c, factor);
  attrs_.reserve_scaled(factor);
}

void Trace::reserve(size_t nodes, size_t deps_per_node, size_t attrs_per_node) {
  id_.reserve(nodes);
  name_.reserve(nodes);
  type_.reserve(nodes);
  start_.reserve(nodes);
  duration_.reserve(nodes);
  ctrl_off_.reserve(nodes + 1);
  data_off_.reserve(nodes + 1);
  attr_off_.reserve(nodes + 1);
  ctrl_.reserve(nodes * deps_per_node / 2);
  data_.reserve(nodes * deps_per_node / 2);
  flags_.reserve(nodes);
  inputs_.reserve(nodes);
  outputs_.reserve(nodes);
  attrs_.reserve(nodes * attrs_per_node, 0);
}

std::optional<AttrView> Trace::find_attr(uint32_t n, StrId name) const {
  for (uint32_t a = attr_begin(n), e = attr_end(n); a < e; ++a)
    if (attrs_.name(a) == name) return attr(a);
  return std::nullopt;
}

std::optional<AttrView> Trace::find_attr(uint32_t n, std::string_view name) const {
  StrId id;
  if (!strings_.find(name, &id)) return std::nullopt;
  return find_attr(n, id);
}

std::string_view Trace::unknown_fields(uint32_t n) const {
  return unknown_.empty() ? std::string_view{} : lookup_unknown(unknown_, unknown_blob_, n);
}

bool Trace::has_unknown_fields() const {
  return !unknown_.empty() || !metadata_unknown_.empty() || attrs_.has_unknown_fields() ||
         metadata_attrs_.has_unknown_fields();
}

size_t Trace::memory_bytes() const {
  return strings_.memory_bytes() + metadata_attrs_.memory_bytes() + attrs_.memory_bytes() +
         (id_.capacity() + start_.capacity() + duration_.capacity() + ctrl_.capacity() + data_.capacity()) * 8 +
         (name_.capacity() + type_.capacity() + ctrl_off_.capacity() + data_off_.capacity() + attr_off_.capacity()) *
             4 +
         flags_.capacity() + (inputs_.capacity() + outputs_.capacity()) * sizeof(IoStrings) + unknown_blob_.capacity() +
         unknown_.capacity() * sizeof(unknown_[0]);
}

}  // namespace chakra
