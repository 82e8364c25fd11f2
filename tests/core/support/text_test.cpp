// Number and string formatting against Python's documented behaviour (values checked with
// CPython 3.11: repr(float), json.dumps(ensure_ascii=True), protobuf's float32 shortening).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "chakra/support/text.h"

namespace {

std::string repr(double v) {
  std::string s;
  chakra::append_python_float(s, v);
  return s;
}

TEST(PythonFloatRepr, MatchesCPython) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {1e16, "1e+16"},
      {1234567890123456.0, "1234567890123456.0"},
      {12345678901234567.0, "1.2345678901234568e+16"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {123456789.0, "123456789.0"},
      {0.3, "0.3"},
      {2.0 / 3, "0.6666666666666666"},
      {-1.25, "-1.25"},
      {100.0, "100.0"},
      {1e22, "1e+22"},
      {250.75, "250.75"},
      {1700000000001515.8, "1700000000001515.8"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const auto& [value, expected] : cases) EXPECT_EQ(repr(value), expected) << value;
}

// Significant digits of a decimal string, without leading/trailing zeros or the exponent.
std::string significant_digits(const std::string& s) {
  std::string d;
  for (char c : s.substr(0, s.find('e')))
    if (c >= '0' && c <= '9') d += c;
  d.erase(0, std::min(d.find_first_not_of('0'), d.size()));
  while (!d.empty() && d.back() == '0') d.pop_back();
  return d;
}

// repr(v) reads back to v and has as few digits as brute force finds: the first precision whose
// correctly rounded form reads back exactly.
void expect_shortest_round_trip(double v) {
  const std::string ours = repr(v);
  ASSERT_EQ(std::strtod(ours.c_str(), nullptr), v) << ours;
  char buf[48];
  for (int p = 0; p <= 16; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  ASSERT_EQ(significant_digits(ours), significant_digits(buf)) << ours << " vs " << buf;
}

TEST(PythonFloatRepr, ShortestDigitsThatRoundTrip) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, 8);
    if (!std::isfinite(v) || v == 0) continue;
    ASSERT_NO_FATAL_FAILURE(expect_shortest_round_trip(v));
  }
}

// Values with few decimal places (timestamps, durations) take a path without printf: the same
// shortest digits as brute force, in fixed notation, and reading back exactly.
TEST(PythonFloatRepr, FewDecimalPlacesAsBruteForce) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const int places = static_cast<int>(rng() % 9);
    const double v =
        static_cast<double>(rng() % (uint64_t{1} << (10 + rng() % 41))) / std::pow(10.0, places) * (rng() % 2 ? -1 : 1);
    ASSERT_NO_FATAL_FAILURE(expect_shortest_round_trip(v));
    if (std::fabs(v) >= 1e-4 && std::fabs(v) < 1e15) {
      ASSERT_EQ(repr(v).find('e'), std::string::npos) << repr(v);
    }
  }
  EXPECT_EQ(repr(1694128201545.123), "1694128201545.123");
  EXPECT_EQ(repr(0.0001), "0.0001");
  EXPECT_EQ(repr(-2.5), "-2.5");
  EXPECT_EQ(repr(-0.0), "-0.0");
  EXPECT_EQ(repr(120.0), "120.0");
}

// Plain decimals parse to strtod's double without it; other text is left to strtod.
TEST(PlainDecimal, AsStrtodOrNotAtAll) {
  std::mt19937_64 rng(5);
  int parsed = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string digits = std::to_string(rng() >> (rng() % 64));
    const size_t point = rng() % (digits.size() + 2);
    std::string literal = point > digits.size() ? digits : digits.substr(0, point) + "." + digits.substr(point);
    if (rng() % 2) literal = "-" + literal;
    double v = 0;
    if (!chakra::parse_plain_decimal(literal, v)) continue;
    ++parsed;
    ASSERT_EQ(v, std::strtod(literal.c_str(), nullptr)) << literal;
    ASSERT_EQ(std::signbit(v), literal[0] == '-') << literal;
  }
  EXPECT_GT(parsed, 100000);
  double v = 0;
  for (const char* no : {"", "-", ".", "1e5", "1.5E3", "NaN", "Infinity", "1.2.3", "9007199254740993", "+1", "1 "})
    EXPECT_FALSE(chakra::parse_plain_decimal(no, v)) << no;
  ASSERT_TRUE(chakra::parse_plain_decimal("1694128201545.123", v));
  EXPECT_EQ(v, 1694128201545.123);
}

TEST(ShortestFloat32, MatchesProtobufPython) {
  const std::pair<float, const char*> cases[] = {
      {1.2345f, "1.2345"},
      {2.3456f, "2.3456"},
      {0.1f, "0.1"},
      {3.0f, "3.0"},
      {1e-5f, "1e-05"},
      {16777217.0f, "16777216.0"},
      {3.4028234663852886e38f, "3.4028235e+38"},
      {1.401298464324817e-45f, "1.4013e-45"},
      {0.9f, "0.9"},
  };
  for (const auto& [value, expected] : cases) EXPECT_EQ(repr(chakra::shortest_float32(value)), expected);
}

TEST(JsonString, PythonEnsureAscii) {
  std::string s;
  chakra::append_json_string(s, "a\"b\\c\n\t\x01\x7f/\xc3\xa9\xf0\x9f\x98\x80", true);
  EXPECT_EQ(s, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f/\\u00e9\\ud83d\\ude00\"");
}

TEST(JsonString, Utf8PassesThroughAndInvalidBytesAreReplaced) {
  std::string s;
  chakra::append_json_string(s, "\xc3\xa9 \xff", false);
  EXPECT_EQ(s, "\"\xc3\xa9 \xef\xbf\xbd\"");
  EXPECT_TRUE(chakra::is_valid_utf8("\xc3\xa9"));
  EXPECT_FALSE(chakra::is_valid_utf8("\xc3"));
  EXPECT_FALSE(chakra::is_valid_utf8("\xed\xa0\x80"));  // a UTF-16 surrogate
  EXPECT_FALSE(chakra::is_valid_utf8("\xc0\xaf"));      // overlong
}

TEST(Base64, RoundTripsAndMatchesRfc4648) {
  std::string s;
  chakra::append_base64(s, "12345");
  EXPECT_EQ(s, "MTIzNDU=");
  const char* vectors[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foobar", "Zm9vYmFy"}};
  for (auto& v : vectors) {
    std::string enc, dec;
    chakra::append_base64(enc, v[0]);
    EXPECT_EQ(enc, v[1]);
    ASSERT_TRUE(chakra::decode_base64(enc, dec));
    EXPECT_EQ(dec, v[0]);
  }
  std::string dec;
  EXPECT_FALSE(chakra::decode_base64("Zm9v!", dec));
  EXPECT_FALSE(chakra::decode_base64("Zg==Zg", dec));
  // The URL-safe alphabet of RFC 4648 §5, unpadded (share links), read back by the same decoder.
  const char* url_vectors[][2] = {{"\xfb\xff", "-_8"}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}};
  for (auto& v : url_vectors) {
    std::string enc;
    chakra::append_base64(enc, v[0], true);
    EXPECT_EQ(enc, v[1]);
    ASSERT_TRUE(chakra::decode_base64(enc, dec));
    EXPECT_EQ(dec, v[0]);
  }
  std::string standard;
  chakra::append_base64(standard, "\xfb\xff");
  EXPECT_EQ(standard, "+/8=");
}

}  // namespace

// As Python's str.split(sep): every separator splits, empty pieces included.
TEST(Split, EveryPieceBetweenSeparatorsAsPython) {
  using V = std::vector<std::string_view>;
  auto split = [](std::string_view s, char sep) {
    const chakra::Split pieces(s, sep);
    return V(pieces.begin(), pieces.end());
  };
  EXPECT_EQ(split("a,b,,c", ','), (V{"a", "b", "", "c"}));
  EXPECT_EQ(split("a,", ','), (V{"a", ""}));
  EXPECT_EQ(split(",a", ','), (V{"", "a"}));
  EXPECT_EQ(split("", ','), (V{""}));
  EXPECT_EQ(split("abc", ','), (V{"abc"}));
  EXPECT_EQ(split("x\ny\n", '\n'), (V{"x", "y", ""}));
}

TEST(Printable, EscapesControlBytesAndInvalidUtf8ButKeepsText) {
  EXPECT_EQ(chakra::printable("plain text, tab\tand newline\n"), "plain text, tab\tand newline\n");
  EXPECT_EQ(chakra::printable("caf\xc3\xa9 \xe2\x86\x92"), "caf\xc3\xa9 \xe2\x86\x92");  // UTF-8 stays
  EXPECT_EQ(chakra::printable(std::string("\x1b[31mred\x00\x7f\xff", 11)), "\\x1b[31mred\\x00\\x7f\\xff");
  EXPECT_EQ(chakra::quoted_excerpt("Ring"), "'Ring'");
  const std::string long_token = std::string(100, 'a') + "\x01";
  EXPECT_EQ(chakra::quoted_excerpt(long_token, 10), "'aaaaaaaaaa...' (101 bytes)");
  // The cut never splits a UTF-8 character: "\xc3\xa9" straddles byte 10 here and is dropped whole.
  EXPECT_EQ(chakra::quoted_excerpt("123456789\xc3\xa9xyz", 10), "'123456789...' (14 bytes)");
}

// The article goes by the first sound, not the first letter: messages name things known only at
// run time (a file's kind, a count), so "a ASTRA-sim" or "a 8-point" would otherwise be printed.
TEST(WithArticle, GoesByTheFirstSound) {
  EXPECT_EQ(chakra::with_article("ASTRA-sim system config"), "an ASTRA-sim system config");
  EXPECT_EQ(chakra::with_article("unknown file"), "an unknown file");
  EXPECT_EQ(chakra::with_article("Kineto trace"), "a Kineto trace");
  EXPECT_EQ(chakra::with_article("PyTorch host ET"), "a PyTorch host ET");
  EXPECT_EQ(chakra::with_article("ALL_TO_ALL"), "an ALL_TO_ALL");
  EXPECT_EQ(chakra::with_article("ET"), "an ET");
  // Acronyms said letter by letter, and those said as words.
  EXPECT_EQ(chakra::with_article("MTIA trace"), "an MTIA trace");
  EXPECT_EQ(chakra::with_article("NPU"), "an NPU");
  EXPECT_EQ(chakra::with_article("GPU"), "a GPU");
  EXPECT_EQ(chakra::with_article("JSON file"), "a JSON file");
  // "u" said "you", "one", a silent "h".
  EXPECT_EQ(chakra::with_article("unit"), "a unit");
  EXPECT_EQ(chakra::with_article("uint64 value"), "a uint64 value");
  EXPECT_EQ(chakra::with_article("one-rank trace"), "a one-rank trace");
  EXPECT_EQ(chakra::with_article("hour"), "an hour");
  EXPECT_EQ(chakra::with_article("host ET"), "a host ET");
  // Numbers as said: eight, eleven, eighteen (and eleven thousand), but one hundred ten.
  EXPECT_EQ(chakra::with_article("8-point product"), "an 8-point product");
  EXPECT_EQ(chakra::with_article("80x4 shape"), "an 80x4 shape");
  EXPECT_EQ(chakra::with_article("11-dimensional network"), "an 11-dimensional network");
  EXPECT_EQ(chakra::with_article("18000-point product"), "an 18000-point product");
  EXPECT_EQ(chakra::with_article("110-point product"), "a 110-point product");
  EXPECT_EQ(chakra::with_article("2-dimensional network"), "a 2-dimensional network");
  EXPECT_EQ(chakra::with_article("1100-point product"), "a 1100-point product");
}
