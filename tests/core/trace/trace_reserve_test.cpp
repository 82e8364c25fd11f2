// Trace::reserve_scaled: every column made room for at once, so appending more of the same
// grows none of them (the page's streaming .et reader relies on it; in wasm a growth is a copy).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "chakra/trace/trace.h"

namespace {

void append_nodes(chakra::Trace& t, uint64_t first_id, uint64_t count) {
  const chakra::StrId name = t.intern("op"), size = t.intern("comm_size"), shape = t.intern("shape");
  chakra::NodeDraft d;
  for (uint64_t id = first_id; id < first_id + count; ++id) {
    d.clear();
    d.id = id;
    d.name = name;
    d.start_time_micros = id * 10;
    d.duration_micros = 5;
    if (id > 1) d.ctrl_deps.push_back(id - 1), d.data_deps.push_back(id - 1);
    d.has_inputs = d.has_outputs = true;
    d.attrs.add_int64(size, static_cast<int64_t>(id));
    const std::vector<uint64_t> dims = {id, 2, 3};
    d.attrs.add_list(shape, chakra::AttrKind::Int64List, dims);
    t.append(d);
  }
}

TEST(TraceReserve, ScaledRoomTakesThatMuchMoreOfTheSameWithoutGrowing) {
  chakra::Trace t;
  append_nodes(t, 1, 1000);
  const size_t before = t.memory_bytes();
  t.reserve_scaled(4.0);
  const size_t reserved = t.memory_bytes();
  EXPECT_GT(reserved, 3 * before) << "the columns were not made room for";
  append_nodes(t, 1001, 2900);  // 3.9 times the nodes in all: within the room
  EXPECT_EQ(t.memory_bytes(), reserved) << "a column grew: reserve_scaled missed it";
  EXPECT_EQ(t.size(), 3900u);
  EXPECT_EQ(t.id(3899), 3900u);
  // A factor of 1 or less, or not a finite number, changes nothing.
  for (double f : {1.0, 0.5, -2.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    t.reserve_scaled(f);
    EXPECT_EQ(t.memory_bytes(), reserved) << f;
  }
}

}  // namespace
