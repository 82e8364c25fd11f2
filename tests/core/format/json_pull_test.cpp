// The JSON pull parser over its three kinds of input: a regular file (mapped a window at a time),
// bytes in memory, and a stream it copies into its own buffer (gzip). Each must give the same
// values, also where a token, a key's colon or a number straddles the end of a window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "chakra/format/io.h"
#include "chakra/format/json_pull.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace testing_support;

namespace {

// Every value in document order, strings by length and bytes (so a view that moved under its
// reader shows), numbers as their text and integers also as read_int64 gives them.
void walk(chakra::JsonPull& j, std::string& out) {
  using Kind = chakra::JsonPull::Kind;
  switch (j.peek()) {
    case Kind::Object: {
      j.begin_object();
      out += '{';
      std::string_view key;
      while (j.next_key(key)) {
        out += "k" + std::to_string(key.size()) + ":" + std::string(key) + "=";
        walk(j, out);
      }
      out += '}';
      break;
    }
    case Kind::Array:
      j.begin_array();
      out += '[';
      while (j.next_element()) walk(j, out), out += ',';
      out += ']';
      break;
    case Kind::String: {
      const std::string_view s = j.read_string_view();
      out += "s" + std::to_string(s.size()) + ":" + std::string(s);
      break;
    }
    case Kind::Number: {
      bool integer = false;
      out += "n" + std::string(j.read_number_text(integer));
      out += integer ? "i" : "f";
      break;
    }
    case Kind::Bool: out += j.read_bool() ? "T" : "F"; break;
    case Kind::Null: j.read_null(), out += "N"; break;
    case Kind::End: FAIL() << "unexpected end";
  }
}

std::string walk_all(chakra::ByteSource& in, size_t window = chakra::JsonPull::kWindowBytes) {
  chakra::JsonPull j(in, window);
  std::string out;
  walk(j, out);
  EXPECT_TRUE(j.at_end());
  return out;
}

// About 11 MB of indented JSON: keys with their colon after whitespace, escapes, numbers of
// every length and form, and one string longer than a whole window.
std::string big_document() {
  std::string doc = "{\n    \"items\": [";
  for (int i = 0; i < 60000; ++i) {
    const std::string pad(static_cast<size_t>(i % 37), ' ');
    const std::string digits = std::to_string(1234567890123456789ull / (1 + static_cast<unsigned>(i % 19) * 7919));
    doc += i ? ",\n        {" : "\n        {";
    doc += "\n            \"id\"" + pad + ":" + pad + std::to_string(i);
    doc += ",\n            \"name_" + std::to_string(i % 97) + "\": \"op\\\\n\\\"" + pad + "\\u00e9x\"";
    doc += ",\n            \"n\": [" + digits + ", -" + digits.substr(0, 1 + i % 17) + ".5e-3, 0, " + digits + "." +
           digits.substr(0, i % 11 + 1) + ", 1E+" + std::to_string(i % 300) + "]";
    doc += ",\n            \"flags\": [true, false, null]\n        }";
  }
  doc += "\n    ],\n    \"long\": \"" + std::string(9 << 20, 'x') + "\"\n}\n";
  return doc;
}

}  // namespace

TEST(JsonPull, MappedFileMemoryAndGzipStreamGiveTheSameValues) {
  const std::string doc = big_document();
  ASSERT_GT(doc.size(), size_t{10} << 20);
  const std::string path = temp_dir() + "/json_pull_big.json";
  write_raw(path, doc);
  auto file = chakra::open_input(path);
#ifndef __EMSCRIPTEN__
  std::string_view probe;
  ASSERT_TRUE(file->map(0, 16, probe)) << "a regular file is read through mapped windows";
#endif
  const std::string from_file = walk_all(*file);

  // Small windows put thousands of keys, colons, numbers and escapes across window ends.
  EXPECT_EQ(walk_all(*chakra::open_input(path), 4096), from_file);
  EXPECT_EQ(walk_all(*chakra::open_input(path), 4096 + 7), from_file);
  auto memory = chakra::memory_input(as_bytes(doc), "memory.json");
  EXPECT_EQ(walk_all(*memory), from_file);
  EXPECT_EQ(walk_all(*chakra::memory_input(as_bytes(doc), "memory.json"), 1000), from_file);

  const std::string gz_path = temp_dir() + "/json_pull_big.json.gz";
  {
    chakra::OutputFile gz(gz_path, chakra::Compression::Gzip);
    gz.write(doc);
    gz.commit();
  }
  auto gzip = chakra::open_input(gz_path);
  std::string_view none;
  EXPECT_FALSE(gzip->map(0, 16, none)) << "gzip is read into the parser's own buffer";
  EXPECT_EQ(walk_all(*gzip), from_file);
  EXPECT_EQ(walk_all(*chakra::open_input(gz_path), 4096), from_file);

  // Spot checks that the walk saw what was written.
  EXPECT_NE(from_file.find("k2:id=n59999i"), std::string::npos);
  EXPECT_NE(from_file.find("k4:long=s" + std::to_string(9 << 20) + ":xxx"), std::string::npos);
  EXPECT_NE(from_file.find("s8:op\\n\"\xc3\xa9x"), std::string::npos);  // escapes decoded (item 0: no padding)
  std::remove(path.c_str());
  std::remove(gz_path.c_str());
}

TEST(JsonPull, IntegersOfEveryLengthAtTheEndOfTheInput) {
  std::string digits;
  for (int n = 1; n <= 18; ++n) {
    digits += static_cast<char>('0' + n % 10);
    for (const std::string& text : {digits, "-" + digits}) {
      const std::string path = temp_dir() + "/json_pull_number.json";
      write_raw(path, text);  // nothing after the number: the scan must stop at the window's end
      auto in = chakra::open_input(path);
      chakra::JsonPull j(*in);
      EXPECT_EQ(j.read_int64(), std::stoll(text)) << text;
      EXPECT_TRUE(j.at_end());
    }
  }
  for (const std::string bad : {"-", "1.", "1e", "1.e5", "-x"}) {
    auto in = chakra::memory_input(as_bytes(bad), "bad.json");  // (the bytes must outlive the source)
    chakra::JsonPull j(*in);
    EXPECT_THROW(j.read_double(), chakra::Error) << bad;
  }
}

TEST(JsonPull, TruncatedMappedFileNamesTheFileAndTheByte) {
  const std::string doc = big_document();
  const std::string path = temp_dir() + "/json_pull_truncated.json";
  write_raw(path, doc.substr(0, (5 << 20) + 123));  // cut inside the items, past the first window
  auto in = chakra::open_input(path);
  try {
    walk_all(*in);
    FAIL() << "a truncated document was accepted";
  } catch (const chakra::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("json_pull_truncated.json: byte "), std::string::npos) << what;
    EXPECT_NE(what.find("truncated"), std::string::npos) << what;
  }
  std::remove(path.c_str());
}

// read_all reads a source whose size it knows into exactly that, and gets every byte whatever
// the reads return: short reads (a file's first read returns the two bytes peeked for gzip),
// a source holding more than it said (a file that grew) or less, and one of unknown size.
TEST(ByteSource, ReadAllGetsEveryByteWhateverTheSizeSaid) {
  struct Pieces : chakra::ByteSource {
    Pieces(std::string d, uint64_t said) : ByteSource("pieces"), data(std::move(d)), said(said) {}
    size_t read(uint8_t* dst, size_t n) override {
      const size_t k = std::min({n, data.size() - at, size_t{1000}});  // at most 1000 at a time
      std::memcpy(dst, data.data() + at, k);
      at += k;
      return k;
    }
    uint64_t raw_position() const override { return at; }
    uint64_t raw_size() const override { return said; }
    std::string data;
    uint64_t said;
    size_t at = 0;
  };
  std::string data(300000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 251);
  for (uint64_t said : {uint64_t{300000}, uint64_t{250000}, uint64_t{299999}, uint64_t{350000}, uint64_t{0}}) {
    Pieces in(data, said);
    EXPECT_EQ(chakra::read_all(in), data) << "size said " << said;
  }
  const std::string path = temp_dir() + "/read_all.bin";
  write_raw(path, data);
  EXPECT_EQ(chakra::read_file(path), data);
  std::remove(path.c_str());
}

TEST(ByteSource, MapIsCountedFromTheReadPositionAndEndsWithTheInput) {
  const std::string path = temp_dir() + "/map_window.txt";
  write_raw(path, "0123456789");
  std::string_view v;
#ifndef __EMSCRIPTEN__  // files are read, not mapped, in wasm
  auto in = chakra::open_input(path);
  uint8_t head[3];
  for (size_t got = 0; got < 3;) got += in->read(head + got, 3 - got);  // reads may come short
  ASSERT_TRUE(in->map(2, 100, v));
  EXPECT_EQ(v, "56789");
  ASSERT_TRUE(in->map(0, 2, v));
  EXPECT_EQ(v, "34");
  ASSERT_TRUE(in->map(20, 5, v));
  EXPECT_TRUE(v.empty());
#endif
  std::remove(path.c_str());

  const std::string text = "abcdef";
  auto memory = chakra::memory_input(as_bytes(text), "m");
  ASSERT_TRUE(memory->map(4, 10, v));
  EXPECT_EQ(v, "ef");
}
