// The real trace corpus: every .et in ../shared decodes, writes back byte for byte, has the node
// counts the catalog gives, and decodes to the content of the reference tools' canonical dumps.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "chakra/format/et_io.h"
#include "chakra/support/text.h"
#include "test_support.h"

using namespace testing_support;
using nlohmann::json;

namespace {

TEST(EtCorpus, EveryTraceDecodesAndWritesBackByteForByte) {
  const auto files = all_shared_traces();
  ASSERT_GT(files.size(), 800u) << "the shared corpus looks incomplete";
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    const std::string bytes = read_decompressed(path);
    chakra::Trace t = decode(bytes, path);
    EXPECT_EQ(chakra::encode_et(t), bytes);
  }
}

TEST(EtCorpus, GzipFilesAreReadTransparently) {
  const std::string path = shared("reference/chakra/inputs/chakra.0.et.gz");
  chakra::Trace from_file = chakra::read_et(path);
  chakra::Trace from_bytes = decode(read_decompressed(path));
  EXPECT_EQ(from_file.size(), 3664u);
  EXPECT_EQ(chakra::encode_et(from_file), chakra::encode_et(from_bytes));
}

// data/CATALOG.md rows: | `group` | repo @ commit : `path/of/rank0/file` | ... kind=chakra_et; nodes=N |
TEST(EtCorpus, NodeCountsMatchTheCatalog) {
  std::ifstream catalog(shared("data/CATALOG.md"));
  ASSERT_TRUE(catalog) << "data/CATALOG.md missing";
  const std::regex row(R"(^\| `([^`]+)` \| [^|]* : `([^`]+)` \|.*kind=chakra_et; nodes=(\d+))");
  std::string line;
  int checked = 0;
  while (std::getline(catalog, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string source = m[2];
    std::string file = shared("data/" + std::string(m[1]) + "/" + source.substr(source.rfind('/') + 1));
    SCOPED_TRACE(file);
    EXPECT_EQ(chakra::read_et(file).size(), std::stoull(m[3]));
    ++checked;
  }
  EXPECT_GE(checked, 13) << "catalog rows with node counts";
}

// The canonical dump format of ../shared/reference (one JSON object per message, proto field
// names, every scalar field present, 64-bit attribute values as strings).
json canon_attr_value(const chakra::Trace& t, chakra::AttrKind k, uint64_t bits) {
  using chakra::AttrKind;
  switch (k) {
    case AttrKind::Double: return chakra::double_of_bits(bits);
    case AttrKind::Float: return chakra::shortest_float32(chakra::float_of_bits(bits));
    case AttrKind::Int32:
    case AttrKind::Sint32:
    case AttrKind::Sfixed32: return static_cast<int64_t>(bits);
    case AttrKind::Uint32:
    case AttrKind::Fixed32: return bits;
    case AttrKind::Int64:
    case AttrKind::Sint64:
    case AttrKind::Sfixed64: return std::to_string(static_cast<int64_t>(bits));
    case AttrKind::Uint64:
    case AttrKind::Fixed64: return std::to_string(bits);
    case AttrKind::Bool: return bits != 0;
    case AttrKind::String: return std::string(t.str(static_cast<chakra::StrId>(bits)));
    case AttrKind::Bytes: {
      std::string b64;
      chakra::append_base64(b64, t.str(static_cast<chakra::StrId>(bits)));
      return b64;
    }
    default: return nullptr;
  }
}

json canon_attrs(const chakra::Trace& t, const chakra::AttrTable& table, uint32_t begin, uint32_t end) {
  json out = json::array();
  for (uint32_t a = begin; a < end; ++a) {
    json o = {{"name", t.str(table.name(a))}, {"doc_string", t.str(table.doc(a))}};
    const chakra::AttrKind k = table.kind(a);
    if (chakra::is_list(k)) {
      json values = json::array();
      for (uint64_t v : table.list(a)) values.push_back(canon_attr_value(t, chakra::element_kind(k), v));
      o[chakra::attr_kind_proto_name(k)] = {{"values", values}};
    } else if (k != chakra::AttrKind::None) {
      o[chakra::attr_kind_proto_name(k)] = canon_attr_value(t, k, table.bits(a));
    }
    out.push_back(o);
  }
  return out;
}

json canon_io(const chakra::Trace& t, const chakra::IoStrings& io) {
  return {{"values", t.str(io.values)}, {"shapes", t.str(io.shapes)}, {"types", t.str(io.types)}};
}

std::vector<json> canon(const chakra::Trace& t) {
  std::vector<json> out;
  out.push_back({{"global_metadata",
                  {{"version", t.metadata_version()},
                   {"attr", canon_attrs(t, t.metadata_attrs(), 0, t.metadata_attrs().size())}}}});
  for (uint32_t n = 0; n < t.size(); ++n) {
    json o = {{"id", t.id(n)},
              {"name", t.name(n)},
              {"type", chakra::node_type_name(t.type(n))},
              {"ctrl_deps", std::vector<uint64_t>(t.ctrl_deps(n).begin(), t.ctrl_deps(n).end())},
              {"data_deps", std::vector<uint64_t>(t.data_deps(n).begin(), t.data_deps(n).end())},
              {"start_time_micros", t.start_time_micros(n)},
              {"duration_micros", t.duration_micros(n)},
              {"attr", canon_attrs(t, t.node_attrs(), t.attr_begin(n), t.attr_end(n))}};
    if (t.has_inputs(n)) o["inputs"] = canon_io(t, t.inputs(n));
    if (t.has_outputs(n)) o["outputs"] = canon_io(t, t.outputs(n));
    out.push_back(o);
  }
  return out;
}

std::string trace_for_canon(const std::string& canon_path) {
  if (canon_path.find("/jsonizer/chakra.0.et.") != std::string::npos)
    return shared("reference/chakra/inputs/chakra.0.et.gz");
  std::string base = canon_path.substr(0, canon_path.find(".canon.jsonl"));
  std::ifstream plain(base);
  return plain ? base : base + ".gz";
}

TEST(EtCorpus, DecodesToTheReferenceCanonicalDumps) {
  const auto dumps = find_files(shared("reference"), {".canon.jsonl", ".canon.jsonl.gz"});
  ASSERT_GE(dumps.size(), 40u);
  for (const auto& dump : dumps) {
    SCOPED_TRACE(dump);
    const std::string et = trace_for_canon(dump);
    std::vector<json> ours = canon(chakra::read_et(et));
    std::istringstream lines(read_decompressed(dump));
    std::string line;
    size_t i = 0;
    while (std::getline(lines, line)) {
      ASSERT_LT(i, ours.size()) << "the reference dump has more records";
      ASSERT_EQ(ours[i], json::parse(line)) << "record " << i;
      ++i;
    }
    EXPECT_EQ(i, ours.size());
  }
}

// A small input is read in place (bytes in memory, a mapped regular file) rather than copied:
// its progress still counts the bytes read so far, up to the whole input.
TEST(EtReading, InputsReadInPlaceReportHowFarTheReadGot) {
  chakra::Trace t;
  chakra::NodeDraft d;
  for (uint64_t id = 0; id < 12000; ++id) {  // about 12 MB: progress is reported every 8 MiB
    d.clear();
    d.id = id;
    d.name = t.intern(std::to_string(id) + std::string(1000, 'x'));
    t.append(d);
  }
  const std::string bytes = chakra::encode_et(t);
  const std::string file = temp_dir() + "/in_place.et";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  struct Seen : chakra::Progress {
    std::vector<uint64_t> done;
    bool report(std::string_view, uint64_t d, uint64_t total) override {
      EXPECT_LE(d, total);
      done.push_back(d);
      return true;
    }
  };
  for (bool from_file : {false, true}) {
    Seen seen;
    chakra::ReadOptions o;
    o.progress = &seen;
    const chakra::Trace back =
        from_file ? chakra::read_et(file, o) : chakra::read_et(chakra::memory_input(as_bytes(bytes), "m.et"), o);
    EXPECT_EQ(back.size(), t.size());
    ASSERT_FALSE(seen.done.empty()) << from_file;
    EXPECT_GT(seen.done.front(), 0u) << from_file;
    EXPECT_GE(seen.done.back(), uint64_t{8} << 20) << from_file;
    EXPECT_TRUE(std::is_sorted(seen.done.begin(), seen.done.end())) << from_file;
  }
}

// The decoder interns an attribute's name by comparing it with the name at the same position
// in the previous node (StringPool::intern with a hint): nodes whose attributes come in another
// order, under other names, in more positions than it remembers, or read into another trace
// all get their own names.
TEST(EtDecode, AttributeNamesAreRightWhateverTheirOrder) {
  chakra::Trace t;
  std::vector<std::vector<std::string>> names = {{"a", "b"}, {"b", "a"}, {"a", "b"}, {"c"}, {}, {"a", "bb", "b"}};
  names.emplace_back();
  for (int k = 0; k < 20; ++k) names.back().push_back("n" + std::to_string(k));  // beyond the 16 remembered
  names.push_back({"n17", "a"});
  chakra::NodeDraft d;
  for (uint64_t id = 0; id < names.size(); ++id) {
    d.clear();
    d.id = id;
    d.name = t.intern("node" + std::to_string(id));
    for (size_t k = 0; k < names[id].size(); ++k)
      d.attrs.add_int64(t.intern(names[id][k]), static_cast<int64_t>(id * 100 + k));
    t.append(d);
  }
  const std::string bytes = chakra::encode_et(t);
  for (int pass = 0; pass < 2; ++pass) {  // the second read starts from a fresh pool
    const chakra::Trace back = chakra::read_et(chakra::memory_input(as_bytes(bytes), "names.et"));
    ASSERT_EQ(back.size(), names.size());
    for (uint32_t n = 0; n < back.size(); ++n) {
      ASSERT_EQ(back.attr_end(n) - back.attr_begin(n), names[n].size()) << n;
      for (uint32_t a = back.attr_begin(n), k = 0; a < back.attr_end(n); ++a, ++k) {
        EXPECT_EQ(back.attr(a).name(), names[n][k]) << n << " " << k;
        EXPECT_EQ(back.attr(a).as_int64(), static_cast<int64_t>(n * 100 + k)) << n << " " << k;
      }
    }
  }
  // The hint itself: right when it names the string, replaced when it names another one or
  // none of this pool's.
  chakra::StringPool pool;
  const chakra::StrId x = pool.intern("x"), y = pool.intern("y");
  chakra::StrId hint = x;
  EXPECT_EQ(pool.intern("x", hint), x);
  EXPECT_EQ(pool.intern("y", hint), y);
  EXPECT_EQ(hint, y);
  hint = 1000;
  const chakra::StrId z = pool.intern("z", hint);
  EXPECT_EQ(z, pool.intern("z"));
  EXPECT_EQ(hint, z);
  EXPECT_EQ(pool.size(), 4u);  // "", x, y, z
}

}  // namespace
