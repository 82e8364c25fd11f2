// same_up_to_node_ids: two traces compared field by field, their node ids by rank.
#include <algorithm>
#include <vector>

#include "chakra/trace/trace.h"

namespace chakra {
namespace {

// Strings of trace a against strings of trace b, by id. A pool holds each string once, so once
// a's string x was found equal to b's y, x equals y and nothing else of b: the first comparison
// of each string is made, the later ones are a lookup (a trace names the same few strings on
// every node).
class SameStrings {
 public:
  SameStrings(const Trace& a, const Trace& b) : a_(a), b_(b), seen_(a.strings().size(), kUnseen) {}
  bool operator()(StrId x, StrId y) {
    if (x >= seen_.size()) return a_.str(x) == b_.str(y);
    if (seen_[x] == kUnseen && a_.str(x) == b_.str(y)) seen_[x] = y;
    return seen_[x] == y;
  }

 private:
  static constexpr StrId kUnseen = ~StrId{0};
  const Trace& a_;
  const Trace& b_;
  std::vector<StrId> seen_;
};

// One attribute of table `ta` (strings in `a`) against one of `tb` (strings in `b`); the value
// of one `pairing` names is told to it instead of compared.
bool same_attr(const Trace& a, const AttrTable& ta, uint32_t i, const Trace& b, const AttrTable& tb, uint32_t j,
               SameStrings& same_str, const AttrPairing* pairing) {
  const AttrKind kind = ta.kind(i);
  if (kind != tb.kind(j) || !same_str(ta.name(i), tb.name(j)) || !same_str(ta.doc(i), tb.doc(j)) ||
      ta.unknown_fields(i) != tb.unknown_fields(j))
    return false;
  if (pairing) {
    const std::string_view name = a.str(ta.name(i));
    if (std::find(pairing->names.begin(), pairing->names.end(), name) != pairing->names.end())
      return pairing->pair(name, AttrView(&a, &ta, i), AttrView(&b, &tb, j));
  }
  // A value is its bits, except that text is a string id of its own trace.
  auto same_value = [&](uint64_t x, uint64_t y) {
    return is_text(element_kind(kind)) ? same_str(StrId(x), StrId(y)) : x == y;
  };
  if (!is_list(kind)) return kind == AttrKind::None || same_value(ta.bits(i), tb.bits(j));
  const std::span<const uint64_t> x = ta.list(i), y = tb.list(j);
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_value);
}

bool same_attrs(const Trace& a, const AttrTable& ta, uint32_t ai, uint32_t ae, const Trace& b, const AttrTable& tb,
                uint32_t bi, uint32_t be, SameStrings& same_str, const AttrPairing* pairing = nullptr) {
  if (ae - ai != be - bi) return false;
  for (; ai < ae; ++ai, ++bi)
    if (!same_attr(a, ta, ai, b, tb, bi, same_str, pairing)) return false;
  return true;
}

bool same_io(const IoStrings& x, const IoStrings& y, SameStrings& same_str) {
  return same_str(x.values, y.values) && same_str(x.shapes, y.shapes) && same_str(x.types, y.types);
}

// A trace's node ids sorted; empty when one repeats.
std::vector<uint64_t> sorted_ids(const Trace& t) {
  std::vector<uint64_t> ids(t.size());
  for (uint32_t n = 0; n < t.size(); ++n) ids[n] = t.id(n);
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) ids.clear();
  return ids;
}

// An id's rank among `ids`, or the id itself marked as no node's (the top bit set; ids of real
// nodes have ranks below 2^32).
uint64_t rank_of(const std::vector<uint64_t>& ids, uint64_t id) {
  const auto it = std::lower_bound(ids.begin(), ids.end(), id);
  if (it != ids.end() && *it == id) return static_cast<uint64_t>(it - ids.begin());
  return id | (uint64_t{1} << 63);
}

}  // namespace

bool same_up_to_node_ids(const Trace& a, const Trace& b, const AttrPairing* pairing) {
  SameStrings same_str(a, b);
  if (a.size() != b.size() || a.has_metadata() != b.has_metadata() || a.metadata_version() != b.metadata_version() ||
      a.metadata_unknown_fields() != b.metadata_unknown_fields() ||
      !same_attrs(a, a.metadata_attrs(), 0, a.metadata_attrs().size(), b, b.metadata_attrs(), 0,
                  b.metadata_attrs().size(), same_str))
    return false;
  const std::vector<uint64_t> ids_a = sorted_ids(a), ids_b = sorted_ids(b);
  if (ids_a.size() != a.size() || ids_b.size() != b.size()) return false;
  // A dangling dependency keeps its id, which must then not be a rank-marked id of the other.
  // Traces with the same ids (the NPUs of one pipeline stage, say) compare them as they are:
  // ranks are then equal exactly where ids are.
  const bool same_ids = ids_a == ids_b;
  auto same_id = [&](uint64_t i, uint64_t j) { return same_ids ? i == j : rank_of(ids_a, i) == rank_of(ids_b, j); };
  auto same_deps = [&](std::span<const uint64_t> x, std::span<const uint64_t> y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_id);
  };
  for (uint32_t n = 0; n < a.size(); ++n) {
    if (!same_id(a.id(n), b.id(n)) || !same_str(a.name_id(n), b.name_id(n)) || a.type(n) != b.type(n) ||
        a.start_time_micros(n) != b.start_time_micros(n) || a.duration_micros(n) != b.duration_micros(n) ||
        a.ctrl_deps_unpacked(n) != b.ctrl_deps_unpacked(n) || a.data_deps_unpacked(n) != b.data_deps_unpacked(n) ||
        a.has_inputs(n) != b.has_inputs(n) || a.has_outputs(n) != b.has_outputs(n) ||
        !same_io(a.inputs(n), b.inputs(n), same_str) || !same_io(a.outputs(n), b.outputs(n), same_str) ||
        a.unknown_fields(n) != b.unknown_fields(n) || !same_deps(a.ctrl_deps(n), b.ctrl_deps(n)) ||
        !same_deps(a.data_deps(n), b.data_deps(n)) ||
        !same_attrs(a, a.node_attrs(), a.attr_begin(n), a.attr_end(n), b, b.node_attrs(), b.attr_begin(n),
                    b.attr_end(n), same_str, pairing))
      return false;
  }
  return true;
}

}  // namespace chakra
