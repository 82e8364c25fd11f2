// Synthetic traces: the reference generator's files and ASTRA-sim's microbenchmarks, byte for
// byte; sizes and labels.
#include <gtest/gtest.h>

#include <map>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "test_support.h"

using namespace testing_support;

namespace {

// Regular files of a (decompressed) ustar archive: name → bytes.
std::map<std::string, std::string> untar(const std::string& tar) {
  std::map<std::string, std::string> files;
  for (size_t at = 0; at + 512 <= tar.size();) {
    std::string name(tar.c_str() + at);
    if (name.empty()) break;
    uint64_t size = std::stoull(std::string(tar, at + 124, 12), nullptr, 8);
    char kind = tar[at + 156];
    if (kind == '0' || kind == '\0') files[name] = tar.substr(at + 512, size);
    at += 512 + (size + 511) / 512 * 512;
  }
  return files;
}

std::map<std::string, std::string> generated(const chakra::MicrobenchmarkOptions& o) {
  std::map<std::string, std::string> out;
  chakra::generate_microbenchmarks(o, [&](std::string_view name, uint32_t npu, const chakra::Trace& t) {
    out[std::string(name) + "." + std::to_string(npu) + ".et"] = chakra::encode_et(t);
  });
  return out;
}

}  // namespace

TEST(Generate, ReferenceMicrobenchmarksAreByteIdentical) {
  chakra::MicrobenchmarkOptions two;
  two.num_npus = 2;
  std::map<std::string, std::string> ours = generated(two);
  EXPECT_EQ(ours.size(), 28u);
  for (const auto& [name, bytes] : ours)
    EXPECT_TRUE(bytes == read_raw(shared("reference/chakra/outputs/generator/npus2/" + name))) << name;

  // The default run: 64 NPUs, 896 files.
  std::map<std::string, std::string> ref =
      untar(read_decompressed(shared("reference/chakra/outputs/generator/default64.tar.gz")));
  ours = generated({});
  ASSERT_EQ(ours.size(), 896u);
  size_t same = 0;
  for (const auto& [name, bytes] : ours) {
    auto it = ref.find("default64/" + name);
    same += it != ref.end() && it->second == bytes;
  }
  EXPECT_EQ(same, 896u);
}

TEST(Generate, CollectivesMatchAstraSimMicrobenchmarks) {
  const std::string dir = shared("reference/astra-sim/inputs/examples/workload/microbenchmarks/");
  size_t compared = 0;
  for (const auto& [type, name] : {std::pair{chakra::CommType::AllReduce, "all_reduce"},
                                   {chakra::CommType::AllGather, "all_gather"},
                                   {chakra::CommType::ReduceScatter, "reduce_scatter"},
                                   {chakra::CommType::AllToAll, "all_to_all"}}) {
    for (uint32_t npus : {4u, 8u, 16u}) {
      chakra::CollectiveOptions o;
      o.type = type;
      o.npus = npus;
      o.size = *chakra::parse_size("1MiB");
      for (uint32_t npu = 0; npu < npus; ++npu, ++compared) {
        std::string file =
            dir + name + "/" + std::to_string(npus) + "npus_1MB/" + name + "." + std::to_string(npu) + ".et";
        EXPECT_TRUE(chakra::encode_et(chakra::collective_trace(o, npu)) == read_raw(file)) << file;
      }
    }
  }
  EXPECT_EQ(compared, 112u);
  // A chain: each collective after the previous one.
  chakra::CollectiveOptions chain;
  chain.count = 3;
  chakra::Trace t = chakra::collective_trace(chain, 5);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.name(0), "all_reduce_8npus_1MB");
  EXPECT_TRUE(t.data_deps(0).empty());
  EXPECT_EQ(t.data_deps(2)[0], t.id(1));
}

TEST(Generate, SizesAndLabels) {
  EXPECT_EQ(chakra::parse_size("1MiB"), 1u << 20);
  EXPECT_EQ(chakra::parse_size("1MB"), 1u << 20);
  EXPECT_EQ(chakra::parse_size("64k"), 64u << 10);
  EXPECT_EQ(chakra::parse_size("2GiB"), uint64_t{2} << 30);
  EXPECT_EQ(chakra::parse_size("1000"), 1000u);
  EXPECT_FALSE(chakra::parse_size("1.5MB"));
  EXPECT_FALSE(chakra::parse_size("MB"));
  EXPECT_FALSE(chakra::parse_size("99999999999999999999"));
  EXPECT_FALSE(chakra::parse_size("20000000TB"));
  EXPECT_EQ(chakra::size_label(1 << 20), "1MB");
  EXPECT_EQ(chakra::size_label(1536), "1536B");
  EXPECT_EQ(chakra::size_label(uint64_t{3} << 30), "3GB");
  EXPECT_EQ(chakra::size_label(uint64_t{1} << 40), "1024GB");
}
