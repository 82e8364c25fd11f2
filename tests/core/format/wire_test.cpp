// Wire-level decoding rules: record framing, detection of the GlobalMetadata record, protobuf
// merge semantics, unknown fields. Byte strings are built by hand here, independently of the codec.
#include <gtest/gtest.h>

#include "chakra/format/et_io.h"
#include "chakra/support/error.h"
#include "test_support.h"

using testing_support::decode;

namespace {

std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string tag(uint32_t field, uint32_t wt) { return varint(uint64_t{field} << 3 | wt); }
std::string len_field(uint32_t field, const std::string& payload) {
  return tag(field, 2) + varint(payload.size()) + payload;
}
std::string record(const std::string& body) { return varint(body.size()) + body; }

const std::string kMetadata = record(len_field(1, "1.0.0"));

TEST(Framing, DetectsGlobalMetadataByContent) {
  // A node with id 0 starts with its name (field 2, like GlobalMetadata.attr) and must not be
  // mistaken for metadata.
  chakra::Trace t = decode(record(len_field(2, "only_a_name")) + record(tag(1, 0) + varint(7)));
  EXPECT_FALSE(t.has_metadata());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.name(0), "only_a_name");
  EXPECT_EQ(t.id(1), 7u);

  // Metadata with attributes but no version (what the PyTorch converter writes).
  std::string attr = len_field(1, "schema") + len_field(29, "1.0.2");
  t = decode(record(len_field(2, attr)) + record(tag(1, 0) + varint(3)));
  EXPECT_TRUE(t.has_metadata());
  ASSERT_EQ(t.metadata_attrs().size(), 1u);
  EXPECT_EQ(t.metadata_attr(0).as_string().value(), "1.0.2");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.id(0), 3u);
}

TEST(Framing, MetadataModeCanBeForced) {
  const std::string bytes = kMetadata + record(tag(1, 0) + varint(1));
  chakra::ReadOptions absent;
  absent.metadata = chakra::MetadataMode::Absent;
  chakra::Trace t = decode(bytes, "x.et", absent);
  EXPECT_FALSE(t.has_metadata());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(chakra::encode_et(t), bytes) << "record 0 kept verbatim as an (odd) node";
}

TEST(Framing, EmptyRecordIsADefaultNode) {
  chakra::Trace t = decode(kMetadata + record("") + record(tag(1, 0) + varint(5)));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.id(0), 0u);
  EXPECT_EQ(t.type(0), 0);
  EXPECT_EQ(t.id(1), 5u);
}

TEST(Framing, MetadataOnlyFileHasNoNodes) {
  chakra::Trace t = decode(kMetadata);
  EXPECT_TRUE(t.has_metadata());
  EXPECT_EQ(t.metadata_version(), "1.0.0");
  EXPECT_EQ(t.size(), 0u);
}

TEST(Decoding, ProtobufMergeRules) {
  std::string node;
  node += tag(1, 0) + varint(1) + tag(1, 0) + varint(9);                                 // last scalar wins
  node += tag(5, 0) + varint(3) + len_field(5, varint(4) + varint(300));                 // unpacked + packed append
  node += len_field(8, len_field(1, "[1]")) + len_field(8, len_field(3, "['int']"));     // message merge
  std::string attr = len_field(1, "x") + tag(9, 0) + varint(5) + len_field(29, "text");  // oneof: last set wins
  node += len_field(10, attr);
  chakra::Trace t = decode(kMetadata + record(node));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.id(0), 9u);
  EXPECT_EQ(std::vector<uint64_t>(t.data_deps(0).begin(), t.data_deps(0).end()), (std::vector<uint64_t>{3, 4, 300}));
  ASSERT_TRUE(t.has_inputs(0));
  EXPECT_EQ(t.str(t.inputs(0).values), "[1]");
  EXPECT_EQ(t.str(t.inputs(0).types), "['int']");
  auto x = t.find_attr(0, "x");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->kind(), chakra::AttrKind::String);
  EXPECT_EQ(x->as_string().value(), "text");
}

TEST(Decoding, ScalarKindsFollowProtobufTruncationAndSignRules) {
  std::string attrs;
  attrs += len_field(10, len_field(1, "i32") + tag(7, 0) + varint(0xFFFFFFFFFFFFFFFFull));  // -1, 10-byte form
  attrs += len_field(10, len_field(1, "u32") + tag(11, 0) + varint(0x1FFFFFFFFull));        // truncated to 32 bits
  attrs += len_field(10, len_field(1, "s64") + tag(17, 0) + varint(3));                     // zigzag 3 = -2
  attrs += len_field(10, len_field(1, "b") + tag(27, 0) + varint(0));                       // false, but set
  chakra::Trace t = decode(kMetadata + record(tag(1, 0) + varint(1) + attrs));
  EXPECT_EQ(t.find_attr(0, "i32")->as_int64().value(), -1);
  EXPECT_EQ(t.find_attr(0, "u32")->as_uint64().value(), 0xFFFFFFFFu);
  EXPECT_EQ(t.find_attr(0, "s64")->as_int64().value(), -2);
  EXPECT_EQ(t.find_attr(0, "b")->kind(), chakra::AttrKind::Bool);
  EXPECT_FALSE(t.find_attr(0, "b")->as_bool().value());
  // Canonical re-encoding: bool false is still written (oneof presence), int32 -1 as 10 bytes.
  std::string again = chakra::encode_et(t);
  EXPECT_NE(again.find(tag(27, 0) + varint(0)), std::string::npos);
  EXPECT_NE(again.find(tag(7, 0) + varint(0xFFFFFFFFFFFFFFFFull)), std::string::npos);
}

TEST(Decoding, UnknownFieldsArePreservedAtEveryLevel) {
  const std::string unknown_node =
      tag(15, 0) + varint(42) + tag(16, 3) + tag(1, 0) + varint(1) + tag(16, 4);  // incl. a group
  const std::string unknown_attr = tag(40, 5) + std::string("\x01\x02\x03\x04", 4);
  const std::string unknown_meta = len_field(7, "future");
  const std::string meta = len_field(1, "1.0.0") + unknown_meta;
  const std::string node = tag(1, 0) + varint(1) + len_field(10, len_field(1, "a") + unknown_attr) + unknown_node;
  const std::string bytes = record(meta) + record(node);
  chakra::Trace t = decode(bytes);
  EXPECT_EQ(t.unknown_fields(0), unknown_node);
  EXPECT_EQ(t.attr(t.attr_begin(0)).unknown_fields(), unknown_attr);
  EXPECT_EQ(t.metadata_unknown_fields(), unknown_meta);
  EXPECT_TRUE(t.has_unknown_fields());
  EXPECT_EQ(chakra::encode_et(t), bytes);
}

TEST(Decoding, KnownFieldWithWrongWireTypeIsKeptAsUnknown) {
  // Field 1 (id) sent as a string: protobuf parsers treat it as an unknown field.
  const std::string node = len_field(1, "abc") + tag(3, 0) + varint(4);
  chakra::Trace t = decode(kMetadata + record(node));
  EXPECT_EQ(t.id(0), 0u);
  EXPECT_EQ(t.type(0), 4);
  EXPECT_EQ(t.unknown_fields(0), len_field(1, "abc"));
}

TEST(Decoding, MalformedRecordsNameTheOffset) {
  // A length-delimited field longer than its record.
  const std::string bad = kMetadata + record(tag(1, 0) + varint(1) + tag(2, 2) + varint(50) + "x");
  try {
    decode(bad, "bad.et");
    FAIL() << "expected an error";
  } catch (const chakra::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.et"), std::string::npos) << msg;
    EXPECT_NE(msg.find("record 2 at byte " + std::to_string(kMetadata.size())), std::string::npos) << msg;
    EXPECT_NE(msg.find("runs past the end"), std::string::npos) << msg;
  }
  // Wire type 7 does not exist.
  EXPECT_THROW(decode(kMetadata + record(tag(1, 0) + varint(1) + tag(20, 7))), chakra::Error);
}

}  // namespace
