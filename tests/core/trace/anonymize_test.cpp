// Anonymization: SHA-256/HMAC against the standards' vectors; on every shared trace, no original
// name, schema, string or path left in the output bytes and the same simulation per NPU; tokens
// stable across keys' runs and ranks; names kept on request, shapes bucketed, process groups kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "chakra/app/sim_presets.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/anonymize_json.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/sha256.h"
#include "chakra/trace/anonymize.h"
#include "test_support.h"

using namespace chakra;
using testing_support::as_bytes;
using testing_support::read_decompressed;
using testing_support::shared;

namespace fs = std::filesystem;

namespace {

// The strings a reader could recognise: letters in them, 4 characters or more, not hex alone
// (a token's digits could spell "face").
bool telling(std::string_view s) {
  if (s.size() < 4) return false;
  bool letter = false, non_hex = false;
  for (char c : s) {
    letter |= std::isalpha(static_cast<unsigned char>(c)) != 0;
    non_hex |= !std::isxdigit(static_cast<unsigned char>(c));
  }
  return letter && non_hex;
}

// The quoted literals of a Python-repr value list.
void literals(std::string_view s, std::set<std::string>& out) {
  for (size_t i = 0; i < s.size(); ++i) {
    const char q = s[i];
    if (q != '\'' && q != '"') continue;
    size_t j = i + 1;
    while (j < s.size() && s[j] != q) j += s[j] == '\\' ? 2 : 1;
    out.emplace(s.substr(i + 1, std::min(j, s.size()) - i - 1));
    i = j;
  }
}

// Every string of a trace that anonymization must not let through.
std::set<std::string> secrets(const Trace& t) {
  std::set<std::string> out;
  auto attrs = [&](const AttrTable& table, uint32_t begin, uint32_t end, bool metadata) {
    for (uint32_t a = begin; a < end; ++a) {
      const std::string_view name = t.str(table.name(a));
      if (metadata && name == "schema") continue;
      const AttrKind k = table.kind(a);
      if (k == AttrKind::String || k == AttrKind::Bytes) out.emplace(t.str(static_cast<StrId>(table.bits(a))));
      if (k == AttrKind::StringList || k == AttrKind::BytesList)
        for (uint64_t v : table.list(a)) out.emplace(t.str(static_cast<StrId>(v)));
    }
  };
  attrs(t.metadata_attrs(), 0, t.metadata_attrs().size(), true);
  for (uint32_t n = 0; n < t.size(); ++n) {
    out.emplace(t.name(n));
    attrs(t.node_attrs(), t.attr_begin(n), t.attr_end(n), false);
    if (t.has_inputs(n)) literals(t.str(t.inputs(n).values), out);
    if (t.has_outputs(n)) literals(t.str(t.outputs(n).values), out);
  }
  // What anonymization keeps on purpose: the names the tools read (and the words in them, which
  // other strings may hold too: 'allreduce' in c10d::allreduce_), strings of numbers only.
  std::vector<std::string> vocabulary;
  for (const std::string& s : out)
    if (vocabulary_kept(s) == kWholeName) vocabulary.push_back(s);
  std::erase_if(out, [&](const std::string& s) {
    return !telling(s) || numbers_only(s) ||
           std::any_of(vocabulary.begin(), vocabulary.end(),
                       [&](const std::string& v) { return v.find(s) != std::string::npos; });
  });
  return out;
}

Anonymizer keyed(const std::string& key) {
  AnonymizeOptions o;
  o.key = key;
  return Anonymizer(o);
}

std::string anonymized_bytes(const Anonymizer& a, const Trace& t, AnonymizeReport* report = nullptr) {
  Trace out;
  AnonymizeReport r;
  a.anonymize(t, out, report ? *report : r);
  return encode_et(out);
}

}  // namespace

TEST(Sha256, StandardVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // RFC 4231 test cases 2 and 6 (a key longer than a block is hashed first).
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// Every shared trace: its anonymized bytes hold none of its telling strings, and read back.
TEST(Anonymize, NoOriginalStringSurvivesInAnySharedTrace) {
  const Anonymizer a = keyed("k");
  size_t traces = 0, scanned = 0;
  for (const std::string& path : testing_support::all_shared_traces()) {
    Trace t;
    try {
      t = read_et(path);
    } catch (const Error&) {
      continue;  // unreadable on purpose (the hostile corpus): other tests cover those
    }
    SCOPED_TRACE(path);
    AnonymizeReport report;
    const std::string bytes = anonymized_bytes(a, t, &report);
    for (const std::string& s : secrets(t)) {
      EXPECT_EQ(bytes.find(s), std::string::npos) << "'" << s << "' survived";
      ++scanned;
    }
    const Trace back = testing_support::decode(bytes, path);
    ASSERT_EQ(back.size(), t.size());
    for (uint32_t n = 0; n < t.size(); ++n) {
      ASSERT_EQ(back.id(n), t.id(n));
      ASSERT_EQ(back.type(n), t.type(n));
      ASSERT_EQ(back.duration_micros(n), t.duration_micros(n));
      ASSERT_EQ(back.start_time_micros(n), t.start_time_micros(n));
      ASSERT_TRUE(
          std::equal(back.data_deps(n).begin(), back.data_deps(n).end(), t.data_deps(n).begin(), t.data_deps(n).end()));
      ASSERT_TRUE(
          std::equal(back.ctrl_deps(n).begin(), back.ctrl_deps(n).end(), t.ctrl_deps(n).begin(), t.ctrl_deps(n).end()));
    }
    ++traces;
  }
  EXPECT_GT(traces, 100u);
  EXPECT_GT(scanned, 1000u);
}

// Every shared multi-rank workload simulates to the same nanoseconds per NPU anonymized.
TEST(Anonymize, SharedWorkloadsSimulateTheSame) {
  // Workloads: PREFIX.<n>.et for n = 0..N-1 in one folder.
  std::map<std::string, std::map<uint32_t, std::string>> workloads;
  for (const std::string& path : testing_support::all_shared_traces()) {
    const std::string name = fs::path(path).filename().string();
    const auto rank = rank_from_file_name(name);
    const size_t dot = name.find('.');
    if (!rank || dot == std::string::npos) continue;
    workloads[fs::path(path).parent_path().string() + "/" + name.substr(0, dot)][*rank] = path;
  }
  const Anonymizer a = keyed("k");
  size_t compared = 0;
  for (const auto& workload : workloads) {
    const std::string& prefix = workload.first;  // not structured bindings: lambdas below use them
    const std::map<uint32_t, std::string>& ranks = workload.second;
    if (ranks.size() < 2 || ranks.rbegin()->first + 1 != ranks.size()) continue;
    SCOPED_TRACE(prefix);
    std::vector<std::string> original, anonymous;
    try {
      for (const auto& [rank, path] : ranks) {
        const Trace t = read_et(path);
        original.push_back(encode_et(t));
        anonymous.push_back(anonymized_bytes(a, t));
      }
    } catch (const Error&) {
      continue;
    }
    const chakra::ClusterPreset& preset = chakra::cluster_preset("h100-hgx-8");
    astra::CommGroups groups;  // the folder's process groups, where it has a file ASTRA-sim reads
    const std::string dir = fs::path(prefix).parent_path().string();
    try {
      if (fs::exists(dir + "/comm_group.json")) groups = astra::load_comm_groups(dir + "/comm_group.json");
    } catch (const Error&) {}
    auto run = [&](const std::vector<std::string>& traces) -> std::vector<uint64_t> {
      sim::SimInputs in;
      in.workload = prefix;
      in.encoded_traces = &traces;
      in.network = chakra::fit_network(preset.network, traces.size());
      in.system = preset.system;
      chakra::fit_system(in.system, in.network.topology.size());
      in.groups = groups;
      try {
        const sim::SimResult r = sim::simulate(in);
        std::vector<uint64_t> finish;
        for (const auto& n : r.npus) finish.push_back(n.finish);
        return finish;
      } catch (const Error&) {
        return {};
      }
    };
    const std::vector<uint64_t> before = run(original);
    EXPECT_EQ(run(anonymous), before);
    compared += !before.empty();
  }
  EXPECT_GE(compared, 5u);
}

// One key gives the same bytes every run and the same token for a name on every rank, anonymized
// separately; another key gives other tokens.
TEST(Anonymize, TokensFollowTheKeyAcrossRanksAndRuns) {
  const std::string dir = shared("data/chakra_et/ericding_pytorch_converted_2rank");
  const Trace r0 = read_et(dir + "/chakra_trace.0.et"), r1 = read_et(dir + "/chakra_trace.1.et");
  EXPECT_EQ(anonymized_bytes(keyed("k"), r0), anonymized_bytes(keyed("k"), r0));
  EXPECT_NE(anonymized_bytes(keyed("k"), r0), anonymized_bytes(keyed("other"), r0));
  Trace a0, a1;
  AnonymizeReport report;
  keyed("k").anonymize(r0, a0, report);
  keyed("k").anonymize(r1, a1, report);
  std::map<std::string, std::string> token_of;  // original name → token, over both ranks
  size_t shared_names = 0;
  for (const auto* pair : {&r0, &r1}) {
    const Trace& t = *pair;
    const Trace& out = pair == &r0 ? a0 : a1;
    for (uint32_t n = 0; n < t.size(); ++n) {
      auto [it, fresh] = token_of.emplace(t.name(n), out.name(n));
      if (!fresh) {
        ASSERT_EQ(it->second, out.name(n)) << t.name(n);
        shared_names += pair == &r1;
      }
    }
  }
  EXPECT_GT(shared_names, 100u);
  std::set<std::string> tokens;
  for (const auto& [name, token] : token_of) tokens.insert(token);
  EXPECT_EQ(tokens.size(), token_of.size());  // no two names share a token
}

// keep_name keeps matching names; bucket_shapes rounds dimensions up; a METADATA node's process
// groups keep their ids and ranks; numeric pg_name is kept; docs and unknown fields are dropped.
TEST(Anonymize, OptionsAndProcessGroups) {
  Trace t;
  NodeDraft d;
  d.id = 1;
  d.name = t.intern("ncclKernel_AllReduce");
  d.type = static_cast<int32_t>(NodeType::CommColl);
  d.has_inputs = true;
  d.inputs.values = t.intern("[[1, 2, 0, 3000, 2, 'cuda:0'], 'secret_arg']");
  d.inputs.shapes = t.intern("[[1000, 3], [], [[5, 64]]]");
  d.inputs.types = t.intern("['Tensor(c10::BFloat16)', 'String']");
  d.attrs.add_string(t.intern("pg_name"), t.intern("3"));
  d.attrs.add_string(t.intern("kernel_file"), t.intern("/home/me/model/secret_layer.py"));
  d.attrs.add_int64(t.intern("comm_size"), 6000);
  d.attrs.attrs.back().doc = t.intern("bytes");
  d.unknown = std::string("\xa8\x06\x01", 3);
  t.append(d);
  d.clear();
  d.id = 2;
  d.name = t.intern("process_group:init");
  d.type = static_cast<int32_t>(NodeType::Metadata);
  d.has_inputs = true;
  d.inputs.values = t.intern(
      R"(['[{"pg_name": "3", "pg_desc": "tensor_parallel_secret", "backend_config": "cuda:nccl", "ranks": [0, 1]}]'])");
  t.append(d);

  AnonymizeOptions o;
  o.key = "k";
  o.keep_name = [](std::string_view n) { return n.rfind("nccl", 0) == 0; };
  o.bucket_shapes = true;
  Trace out;
  AnonymizeReport r;
  Anonymizer(o).anonymize(t, out, r);
  EXPECT_EQ(out.name(0), "ncclKernel_AllReduce");
  EXPECT_EQ(r.names_kept, 1u);
  EXPECT_EQ(out.name(1), "process_group:init");  // a marker the converter reads
  EXPECT_EQ(r.names_vocabulary, 1u);
  EXPECT_EQ(out.str(out.inputs(0).shapes), "[[1024, 4], [], [[8, 64]]]");
  EXPECT_EQ(r.shapes_bucketed, 3u);
  EXPECT_EQ(out.str(out.inputs(0).types), "['Tensor(c10::BFloat16)', 'String']");
  const std::string values(out.str(out.inputs(0).values));
  EXPECT_TRUE(values.starts_with("[[1, 2, 0, 3000, 2, 'str_")) << values;
  EXPECT_EQ(values.find("secret"), std::string::npos);
  EXPECT_EQ(out.find_attr(0, "pg_name")->as_string(), "3");
  EXPECT_TRUE(out.find_attr(0, "kernel_file")->as_string()->starts_with("str_"));
  EXPECT_EQ(out.find_attr(0, "comm_size")->as_int64(), 6000);
  EXPECT_EQ(out.attr(out.attr_begin(0) + 2).doc(), "");
  EXPECT_EQ(r.docs_dropped, 1u);
  EXPECT_EQ(r.unknown_fields_dropped, 1u);
  EXPECT_FALSE(out.has_unknown_fields());
  const std::string groups(out.str(out.inputs(1).values));
  EXPECT_EQ(groups.find("secret"), std::string::npos) << groups;
  EXPECT_EQ(groups.find("nccl"), std::string::npos) << groups;
  const auto parsed = nlohmann::json::parse(groups.substr(2, groups.size() - 4));
  EXPECT_EQ(parsed[0]["pg_name"], "3");
  EXPECT_EQ(parsed[0]["ranks"], nlohmann::json::parse("[0, 1]"));
}

// The names the tools read are kept, wholly or their classifying prefix; every other name is a
// token; strings of numbers only are kept.
TEST(Anonymize, NamesTheToolsReadAreKept) {
  const Anonymizer a = keyed("k");
  AnonymizeReport r;
  for (const char* kept : {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                           "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
                           "nccl:all_to_all",
                           "nccl:coalesced",
                           "gloo:all_reduce",
                           "Memcpy DtoH (Device -> Pageable)",
                           "Memset (Device)",
                           "cudaLaunchKernel",
                           "cudaStreamSynchronize",
                           "hipMemcpyAsync",
                           "cuLaunchKernel",
                           "ProfilerStep#12",
                           "c10d::allreduce_",
                           "c10d::send",
                           "## process_group:init ##",
                           "record_param_comms",
                           "[pytorch|profiler|execution_trace|thread]",
                           "ac2g",
                           "thread_name",
                           "PyTorch Profiler (0)"}) {
    EXPECT_EQ(vocabulary_kept(kept), kWholeName) << kept;
    EXPECT_EQ(a.name(kept, r), kept);
  }
  EXPECT_EQ(r.names_vocabulary, 20u);
  for (const char* replaced : {"aten::mm", "## forward ##", "void gemmSN_TN_kernel<float, 128>(cublasGemmSmallNParams)",
                               "DLRM_Net.forward", "cuda", "cudafree helper", "ProfilerStep#x", "c10d::my group",
                               "PyTorch Profiler (x)", "Optimizer.zero_grad#Adagrad.zero_grad"}) {
    EXPECT_EQ(vocabulary_kept(replaced), 0u) << replaced;
    EXPECT_EQ(a.name(replaced, r), a.token("op", replaced));
  }
  EXPECT_EQ(r.names, 10u);
  // The converter leaves optimizer steps' own time out: the prefix stays, the class does not.
  EXPECT_EQ(a.name("Optimizer.step#Adagrad.step", r), "Optimizer.step#" + a.token("op", "Optimizer.step#Adagrad.step"));
  EXPECT_EQ(a.name("", r), "");
  for (const char* numbers : {"", "3", "-1.5e-3", "0x7f00ab", "[0, 1, 2]", "[[1, 2], []]", "True", "None", "2.18.3"}) {
    EXPECT_TRUE(numbers_only(numbers)) << numbers;
    uint64_t count = 0;
    EXPECT_EQ(a.text(numbers, count), numbers);
    EXPECT_EQ(count, 0u);
  }
  for (const char* words : {"cuda:0", "default_pg", "e", "0xg1", "[0, one]", "/home/me/model.py", "1 2 x"}) {
    EXPECT_FALSE(numbers_only(words)) << words;
    uint64_t count = 0;
    EXPECT_EQ(a.text(words, count), a.token("str", words));
    EXPECT_EQ(count, 1u);
  }
}

namespace {

std::string anonymized_json(const Anonymizer& a, const std::string& text, AnonymizeReport& report,
                            PytorchJsonKind* kind = nullptr) {
  StringSink out;
  const PytorchJsonKind k = anonymize_pytorch_json(a, memory_input(as_bytes(text), "t.json"), out, report);
  if (kind) *kind = k;
  return out.out;
}

bool is_token(const std::string& s) {
  const size_t at = s.rfind('_');
  return at != std::string::npos && at >= 2 && s.size() - at == 13 &&
         (s.compare(at - 2, 2, "op") == 0 || (at >= 3 && s.compare(at - 3, 3, "str") == 0)) &&
         std::all_of(s.begin() + static_cast<long>(at) + 1, s.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// Walks an original JSON value and its anonymized copy together: the same shape and keys, every
// number, bool and null equal, every string kept or a token (with the prefix a name keeps).
void same_shape(const nlohmann::json& o, const nlohmann::json& a, const std::string& where, std::set<std::string>& kept,
                std::set<std::string>& replaced) {
  ASSERT_EQ(o.type(), a.type()) << where;
  if (o.is_object()) {
    ASSERT_EQ(o.size(), a.size()) << where;
    for (auto it = o.begin(); it != o.end(); ++it) {
      ASSERT_TRUE(a.contains(it.key())) << where << "/" << it.key();
      same_shape(it.value(), a[it.key()], where + "/" + it.key(), kept, replaced);
    }
  } else if (o.is_array()) {
    ASSERT_EQ(o.size(), a.size()) << where;
    for (size_t i = 0; i < o.size(); ++i) same_shape(o[i], a[i], where + "[" + std::to_string(i) + "]", kept, replaced);
  } else if (o.is_string()) {
    const std::string& before = o.get_ref<const std::string&>();
    const std::string& after = a.get_ref<const std::string&>();
    if (before == after) {
      kept.insert(before);
    } else {
      EXPECT_TRUE(is_token(after)) << where << ": " << after;
      replaced.insert(before);
    }
  } else {
    EXPECT_EQ(o, a) << where;
  }
}

}  // namespace

// Host ETs and linked traces (JSON): names as the .et's, tensor types, numeric process-group
// names, the groups' ids and ranks and the schema kept; every other string a token.
TEST(AnonymizeJson, HostEtTokensMatchTheEtsAndKeepWhatTheConverterReads) {
  const std::string json = R"JSON({"schema": "1.1.1-chakra.0.0.4", "time": "2023-09-07 16:09:59", "nodes": [
    {"name": "aten::mm", "id": 5, "op_schema": "aten::mm(Tensor self, Tensor mat2) -> Tensor",
     "inputs": [[5, 6, 0, 112, 4, "cuda:0"]], "input_shapes": [[112, 3]], "input_types": ["Tensor(float)"],
     "attrs": [{"name": "pg_name", "type": "string", "value": "7"}, {"name": "rf_id", "type": "uint64", "value": 4}]},
    {"name": "## process_group:init ##", "id": 6, "inputs": {"values":
     ["[{\"pg_name\": \"0\", \"pg_desc\": \"tensor_parallel_secret\", \"ranks\": [0, 1]}]"], "shapes": [[]], "types": ["String"]}},
    {"name": "Optimizer.step#SecretAdam.step", "id": 7, "cat": "cpu_op", "stream": "my_stream"}]})JSON";
  AnonymizeOptions o;
  o.key = "k";
  o.bucket_shapes = true;
  const Anonymizer a(o);
  AnonymizeReport r;
  PytorchJsonKind kind;
  const std::string text = anonymized_json(a, json, r, &kind);
  EXPECT_EQ(kind, PytorchJsonKind::HostEt);
  EXPECT_EQ(text.find("ecret"), std::string::npos) << text;
  const auto out = nlohmann::json::parse(text);
  EXPECT_EQ(out["schema"], "1.1.1-chakra.0.0.4");
  EXPECT_EQ(out["time"], a.token("str", "2023-09-07 16:09:59"));
  const auto& mm = out["nodes"][0];
  // The .et anonymizer gives the same tokens.
  Trace t, anonymous;
  NodeDraft d;
  d.name = t.intern("aten::mm");
  d.attrs.add_string(t.intern("op_schema"), t.intern("aten::mm(Tensor self, Tensor mat2) -> Tensor"));
  t.append(d);
  a.anonymize(t, anonymous, r);
  EXPECT_EQ(mm["name"], std::string(anonymous.name(0)));
  EXPECT_EQ(mm["op_schema"], *anonymous.find_attr(0, "op_schema")->as_string());
  EXPECT_EQ(mm["inputs"][0][5], a.token("str", "cuda:0"));
  EXPECT_EQ(mm["input_shapes"], nlohmann::json::parse("[[128, 4]]"));
  EXPECT_EQ(mm["input_types"][0], "Tensor(float)");
  EXPECT_EQ(mm["attrs"][0]["name"], "pg_name");
  EXPECT_EQ(mm["attrs"][0]["value"], "7");
  EXPECT_EQ(mm["attrs"][1]["value"], 4);
  const auto& init = out["nodes"][1];
  EXPECT_EQ(init["name"], "## process_group:init ##");
  EXPECT_EQ(init["inputs"]["types"][0], "String");
  const auto groups = nlohmann::json::parse(init["inputs"]["values"][0].get<std::string>());
  EXPECT_EQ(groups[0]["pg_name"], "0");
  EXPECT_EQ(groups[0]["ranks"], nlohmann::json::parse("[0, 1]"));
  EXPECT_EQ(groups[0]["pg_desc"], a.token("str", "tensor_parallel_secret"));
  EXPECT_EQ(out["nodes"][2]["name"], "Optimizer.step#" + a.token("op", "Optimizer.step#SecretAdam.step"));
  EXPECT_EQ(out["nodes"][2]["cat"], "cpu_op");
  EXPECT_EQ(out["nodes"][2]["stream"], a.token("str", "my_stream"));
  EXPECT_EQ(r.nodes, 4u);  // three here, one in the .et
  // Not a trace: named, and said why.
  for (const auto& [bad, expected] :
       std::vector<std::pair<std::string, std::string>>{{"{nope", "t.json: byte 1:"},
                                                        {"[1, 2]", "the top level is not a JSON object"},
                                                        {R"({"name": "x"})", "neither a PyTorch host execution trace"},
                                                        {R"({"nodes": []} x)", "unexpected data after"}}) {
    try {
      anonymized_json(a, bad, r);
      ADD_FAILURE() << bad << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

// Every shared Kineto trace keeps its structure: the same events with the same keys, phases,
// categories, times, pids/tids, ids and numbers; names classify as the originals do (the
// analyses' kinds, the converter's collectives, iterations); no other original string survives.
TEST(AnonymizeJson, KinetoTracesKeepTheirStructure) {
  const Anonymizer a = keyed("k");
  std::vector<std::string> files = testing_support::find_files(shared("data/kineto"), {".json", ".json.gz"});
  for (const std::string& f : testing_support::find_files(shared("data/pairs"), {".json", ".json.gz"}))
    if (read_decompressed(f).find("\"traceEvents\"") != std::string::npos) files.push_back(f);
  size_t compared = 0, events = 0;
  for (const std::string& path : files) {
    const std::string original = read_decompressed(path);
    if (original.size() > (size_t{4} << 20)) continue;  // the large ones are more of the same
    SCOPED_TRACE(path);
    AnonymizeReport r;
    PytorchJsonKind kind;
    const std::string text = anonymized_json(a, original, r, &kind);
    EXPECT_EQ(kind, PytorchJsonKind::Kineto);
    const auto before = nlohmann::json::parse(original), after = nlohmann::json::parse(text);
    std::set<std::string> kept, replaced;
    same_shape(before, after, "", kept, replaced);
    if (testing::Test::HasFatalFailure()) return;
    const auto& in = before["traceEvents"];
    const auto& out = after["traceEvents"];
    for (size_t i = 0; i < in.size(); ++i) {
      const auto& e = in[i];
      const auto& x = out[i];
      if (e.contains("ph")) {
        EXPECT_EQ(x["ph"], e["ph"]) << i;
      }
      for (const char* key : {"ts", "dur", "pid", "tid", "id"})
        if (e.contains(key) && e[key].is_number()) {
          EXPECT_EQ(x[key], e[key]) << i << " " << key;
        }
      if (e.contains("cat") && e["cat"].is_string() && e["cat"] != "") {
        const std::string cat = e["cat"];
        if (cat == "cpu_op" || cat == "kernel" || cat == "cuda_runtime" || cat == "gpu_memcpy" || cat == "ac2g" ||
            cat == "user_annotation" || cat == "gpu_memset" || cat == "cuda_sync" || cat == "python_function") {
          EXPECT_EQ(x["cat"], e["cat"]) << i;
        }
      }
      if (!e.contains("name") || !e["name"].is_string()) continue;
      const std::string name = e["name"], token = x["name"];
      EXPECT_EQ(classify_gpu_op(token), classify_gpu_op(name)) << name;
      if (classify_gpu_op(name) == GpuKind::Communication) {  // the converter's collective types
        EXPECT_EQ(collective_of(token, true), collective_of(name, true)) << name;
      }
      EXPECT_EQ(token.starts_with("ProfilerStep#"), name.starts_with("ProfilerStep#")) << name;
      ++events;
    }
    // No replaced string survives inside a string kept for what it holds (numbers, types, labels,
    // enumerations): tokens hold only hex digits, and names the tools read are kept on purpose.
    std::erase_if(kept, [](const std::string& k) { return vocabulary_kept(k) == kWholeName; });
    for (const std::string& secret : replaced) {
      if (secret.size() < 8 || !telling(secret)) continue;
      for (const std::string& k : kept)
        EXPECT_EQ(k.find(secret), std::string::npos) << "'" << secret << "' in '" << k << "'";
    }
    EXPECT_GT(r.names, 0u);
    ++compared;
  }
  EXPECT_GE(compared, 15u);
  EXPECT_GT(events, 50000u);
}

// Anonymizing a rank's host ET and Kineto trace under one key, then linking and converting,
// gives the bytes that linking, converting and then anonymizing give: the linker still pairs
// every op (its names agree in both files), the converter still finds the collectives, the
// process groups and the optimizer steps. Likewise for host ETs and linked traces alone.
TEST(AnonymizeJson, CommutesWithLinkingAndConverting) {
  const Anonymizer a = keyed("k");
  auto convert = [](const std::string& linked) {
    return encode_et(convert_pytorch(memory_input(as_bytes(linked), "linked.json")).trace);
  };
  auto anonymized_et = [&](const std::string& et) {
    Trace out;
    AnonymizeReport r;
    a.anonymize(testing_support::decode(et), out, r);
    return encode_et(out);
  };
  const std::string pairs = shared("data/pairs");
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"dlrm_8rank_v100/rank0/dlrm_eg_0.json", "dlrm_8rank_v100/rank0/worker0_step_12.1694128201545.pt.trace.json"},
      {"dlrm_8rank_v100/rank5/dlrm_eg_5.json", "dlrm_8rank_v100/rank5/worker5_step_12.1694128201549.pt.trace.json"},
      {"hta_simple_add_a100_1rank/benchmark_simple_add_et.json.gz",
       "hta_simple_add_a100_1rank/benchmark_simple_add_trace.json.gz"},
      {"param_linear_rtx2080ti_1rank/linear_et.json.gz", "param_linear_rtx2080ti_1rank/linear_kineto.json.gz"},
      {"crossrun_resnet_ddp_a100_2rank/resnet_1gpu_et.1.0.3-chakra.0.0.4.json.gz",
       "crossrun_resnet_ddp_a100_2rank/nccl_data.json.gz"}};
  LinkOptions options;
  options.sync_deps = true;
  options.force = true;  // the cross-run ResNet pair's processes differ (it is one by name only)
  for (const auto& [host, kineto] : runs) {
    SCOPED_TRACE(host);
    const std::string h = read_decompressed(pairs + "/" + host), k = read_decompressed(pairs + "/" + kineto);
    AnonymizeReport r;
    const std::string ah = anonymized_json(a, h, r), ak = anonymized_json(a, k, r);
    StringSink linked, linked_anonymous;
    const LinkReport before =
        link_traces(memory_input(as_bytes(h), "h.json"), memory_input(as_bytes(k), "k.json"), linked, options);
    const LinkReport after = link_traces(memory_input(as_bytes(ah), "h.json"), memory_input(as_bytes(ak), "k.json"),
                                         linked_anonymous, options);
    EXPECT_EQ(after.method, before.method);
    EXPECT_EQ(after.host_ops_linked, before.host_ops_linked);
    EXPECT_EQ(after.names_agree, before.names_agree);
    EXPECT_EQ(after.gpu_ops_linked, before.gpu_ops_linked);
    EXPECT_EQ(after.sync_edges, before.sync_edges);
    EXPECT_GT(before.host_ops_linked, 30u);
    EXPECT_EQ(convert(linked_anonymous.out), anonymized_et(convert(linked.out)));
  }
  std::vector<std::string> alone = testing_support::find_files(shared("data/pytorch_et"), {".json", ".json.gz"});
  for (const std::string& f :
       testing_support::find_files(shared("reference/chakra/outputs/trace_link"), {".linked.json", ".linked.json.gz"}))
    alone.push_back(f);
  for (const std::string& path : alone) {
    SCOPED_TRACE(path);
    const std::string h = read_decompressed(path);
    AnonymizeReport r;
    EXPECT_EQ(convert(anonymized_json(a, h, r)), anonymized_et(convert(h)));
  }
  EXPECT_GE(alone.size(), 6u);
}

// Hostile nesting (200,000 levels) anywhere in a host ET or Kineto trace is an error naming the
// file, not a stack overflow; in a process_group:init string it is a string like any other.
TEST(AnonymizeJson, DeepNestingIsAnErrorNotACrash) {
  const Anonymizer a = keyed("k");
  const size_t depth = 200000;
  auto deep = [&](char open, char close) {
    std::string s;
    for (size_t i = 0; i < depth; ++i) s += open == '{' ? "{\"a\":" : "[";
    s += "1";
    for (size_t i = 0; i < depth; ++i) s += close;
    return s;
  };
  for (const std::string& nested : {deep('[', ']'), deep('{', '}')}) {
    for (const std::string& doc : {R"({"schema": "1.0.1", "nodes": [{"name": "x", "inputs": )" + nested + "}]}",
                                   R"({"nodes": [{"name": "x", "attrs": [{"name": "a", "value": )" + nested + "}]}]}",
                                   R"({"traceEvents": [{"ph": "X", "args": {"Input Dims": )" + nested + "}}]}",
                                   R"({"deviceProperties": )" + nested + R"(, "traceEvents": []})"}) {
      AnonymizeReport r;
      try {
        anonymized_json(a, doc, r);
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("t.json: byte "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("JSON nested deeper than 512 levels"), std::string::npos) << e.what();
      }
    }
  }
  AnonymizeReport report;
  EXPECT_THROW(anonymized_json(a, deep('[', ']'), report), Error);  // not an object: said at its first byte
  // The groups are a JSON string: nested too deep to be groups, its text is a token.
  std::string groups = "[{\\\"pg_name\\\": ";
  for (size_t i = 0; i < depth; ++i) groups += "[";
  for (size_t i = 0; i < depth; ++i) groups += "]";
  groups += "}]";
  AnonymizeReport r;
  const auto out = nlohmann::json::parse(
      anonymized_json(a, R"({"nodes": [{"name": "## process_group:init ##", "inputs": [")" + groups + "\"]}]}", r));
  EXPECT_TRUE(is_token(out["nodes"][0]["inputs"][0].get<std::string>()));
}

// The archive the web page downloads: read back by walking its central directory as an unzip
// tool does, every file's bytes and CRC-32 intact.
TEST(ZipStore, CentralDirectoryListsEveryFileIntact) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"rank.0.et", std::string("\x00\x01\x02\xff", 4)}, {"comm_group.json", "{\"1\": [0, 1]}"}, {"empty", ""}};
  const std::string zip = zip_store(files);
  auto u16 = [&](size_t at) {
    return uint32_t{static_cast<uint8_t>(zip[at])} | uint32_t{static_cast<uint8_t>(zip[at + 1])} << 8;
  };
  auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
  const size_t end = zip.size() - 22;
  ASSERT_EQ(u32(end), 0x06054b50u);
  ASSERT_EQ(u16(end + 10), files.size());
  size_t at = u32(end + 16);
  for (const auto& [name, bytes] : files) {
    ASSERT_EQ(u32(at), 0x02014b50u);
    const uint32_t crc = u32(at + 16), size = u32(at + 24), name_len = u16(at + 28), local = u32(at + 42);
    EXPECT_EQ(zip.substr(at + 46, name_len), name);
    EXPECT_EQ(u32(local), 0x04034b50u);
    const size_t data = local + 30 + u16(local + 26) + u16(local + 28);
    EXPECT_EQ(zip.substr(data, size), bytes);
    EXPECT_EQ(crc, static_cast<uint32_t>(
                       crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size()))));
    at += 46 + name_len + u16(at + 30) + u16(at + 32);
  }
  EXPECT_EQ(at, end);
}

// The key of a run that keeps none: 32 bytes, different every time (two equal keys would give
// two exports the same tokens).
TEST(Anonymize, RandomKeysAreFreshEachTime) {
  const std::string a = random_anonymize_key(), b = random_anonymize_key();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(b.size(), 32u);
  EXPECT_NE(a, b);
}
