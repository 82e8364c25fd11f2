// Bad input gives an error that names the input and what is wrong, never a crash or a silently
// partial trace.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <random>

#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;

namespace {

// Message of the chakra::Error thrown by f, or "" if none was thrown.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "";
}

std::string gzip(const std::string& data, int level = 9) {
  std::string out(compressBound(static_cast<uLong>(data.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

const std::string& sample() {
  static const std::string bytes =
      read_decompressed(shared("reference/chakra/outputs/converter_pytorch/1.0.2-chakra.0.0.4.et"));
  return bytes;
}

TEST(BadInput, TruncatedFileAtAnyPointIsAnErrorNamingTheOffset) {
  const std::string& full = sample();
  int errors = 0;
  for (size_t cut = 1; cut < full.size(); cut += 997) {
    std::string msg = error_of([&] { decode(full.substr(0, cut), "cut.et"); });
    // Cutting exactly between two records leaves a shorter but valid trace.
    if (msg.empty()) continue;
    ++errors;
    EXPECT_NE(msg.find("cut.et: record "), std::string::npos) << msg;
    EXPECT_NE(msg.find(" at byte "), std::string::npos) << msg;
  }
  EXPECT_GT(errors, 100);
}

TEST(BadInput, RandomBytes) {
  std::mt19937 rng(7);
  int rejected = 0;
  for (int i = 0; i < 200; ++i) {
    std::string junk(1 + rng() % 4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    std::string msg = error_of([&] { decode(junk, "junk.bin"); });
    if (!msg.empty()) {
      EXPECT_EQ(msg.rfind("junk.bin: ", 0), 0u) << msg;
      ++rejected;
    }
  }
  // Short random strings can happen to be valid protobuf; long ones essentially never are.
  EXPECT_GT(rejected, 190);
}

TEST(BadInput, LengthPrefixLargerThanTheFile) {
  const std::string path = temp_dir() + "/huge_length.et";
  write_raw(path, std::string("\xff\xff\xff\x7f", 4) + "abc");
  std::string msg = error_of([&] { chakra::read_et(path); });
  EXPECT_NE(msg.find("huge_length.et: record 1 at byte 0: record length 268435455 exceeds the 3 bytes left"),
            std::string::npos)
      << msg;
  chakra::ReadOptions options;
  options.max_record_bytes = 16;
  msg = error_of([&] { decode(std::string(1, 100) + std::string(100, '\0'), "big.et", options); });
  EXPECT_NE(msg.find("big.et: record 1 at byte 0: record length 100 exceeds the limit of 16 bytes"), std::string::npos)
      << msg;
}

TEST(BadInput, EmptyFile) {
  const std::string path = temp_dir() + "/empty.et";
  write_raw(path, "");
  EXPECT_EQ(error_of([&] { chakra::read_et(path); }), path + ": empty file (0 bytes): not a Chakra trace");
}

// The commonest wrong file for an .et reader is JSON (a PyTorch trace, our own JSON): the error
// says so and which command reads it; a binary file that is no trace gets no such hint.
TEST(BadInput, JsonGivenForAnEtTraceIsNamed) {
  const std::string dir = temp_dir();
  write_raw(dir + "/host.json", "{\"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"nodes\": []}");
  write_raw(dir + "/list.json", "\n  [1, 2, 3]");
  for (const char* name : {"host.json", "list.json"}) {
    std::string msg = error_of([&] { chakra::read_et(dir + "/" + name); });
    EXPECT_NE(msg.find(std::string(name) + ": record 1 at byte 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("this is JSON text, not a Chakra .et (protobuf) trace"), std::string::npos) << msg;
    EXPECT_NE(msg.find("chakra convert pytorch"), std::string::npos) << msg;
  }
  write_raw(dir + "/noise.bin", std::string("\x05\xff\xff\xff\xff\x01", 6));
  std::string msg = error_of([&] { chakra::read_et(dir + "/noise.bin"); });
  EXPECT_NE(msg.find("noise.bin: record 1"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("JSON"), std::string::npos) << msg;
}

TEST(BadInput, DirectoryInsteadOfFile) {
  const std::string dir = temp_dir();
  EXPECT_EQ(error_of([&] { chakra::read_et(dir); }), dir + ": is a directory, not a file");
  EXPECT_NE(error_of([&] { chakra::read_et(dir + "/missing.et"); }).find("missing.et: cannot open"), std::string::npos);
}

TEST(BadInput, GzipBombIsStoppedEarly) {
  const std::string bomb = gzip(std::string(8u << 20, '\0'));
  ASSERT_LT(bomb.size(), 64u << 10);
  chakra::ReadOptions options;
  options.input.gzip_ratio_floor = 1u << 20;
  options.input.max_gzip_ratio = 100;
  std::string msg = error_of([&] { decode(bomb, "bomb.et.gz", options); });
  EXPECT_NE(msg.find("bomb.et.gz: gzip data expands more than 100-fold"), std::string::npos) << msg;
}

TEST(BadInput, CorruptAndTruncatedGzip) {
  std::string gz = gzip(sample());
  std::string msg = error_of([&] { decode(gz.substr(0, gz.size() / 2), "half.et.gz"); });
  EXPECT_NE(msg.find("half.et.gz: gzip data ends early"), std::string::npos) << msg;
  std::string flipped = gz;
  for (size_t i = 40; i < 80; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  msg = error_of([&] { decode(flipped, "flipped.et.gz"); });
  EXPECT_EQ(msg.rfind("flipped.et.gz: ", 0), 0u) << msg;
}

TEST(BadInput, NodeLimit) {
  chakra::ReadOptions options;
  options.max_nodes = 10;
  std::string msg = error_of([&] { decode(sample(), "many.et", options); });
  EXPECT_NE(msg.find("many.et: more than 10 nodes"), std::string::npos) << msg;
}

TEST(BadInput, FailedWriteLeavesNoFile) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/out.et";
  {
    chakra::OutputFile out(path);
    out.write("partial");
    // destroyed without commit(), as when an exception unwinds
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "temporary file left behind";
}

}  // namespace
