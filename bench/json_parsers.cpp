#include "json_parsers.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "chakra/format/io.h"
#include "chakra/format/json_pull.h"

#ifdef CHAKRA_BENCH_SIMDJSON
#include <simdjson.h>
#endif

namespace bench {
namespace {

// Every value visited, strings decoded, numbers read: what a converter must do at least.
size_t walk(chakra::JsonPull& j, std::string& scratch) {
  using Kind = chakra::JsonPull::Kind;
  size_t values = 1;
  switch (j.peek()) {
    case Kind::Object:
      j.begin_object();
      while (j.next_key(scratch)) values += walk(j, scratch);
      break;
    case Kind::Array:
      j.begin_array();
      while (j.next_element()) values += walk(j, scratch);
      break;
    case Kind::String: j.read_string(scratch); break;
    case Kind::Number: j.read_double(); break;
    case Kind::Bool: j.read_bool(); break;
    default: j.read_null(); break;
  }
  return values;
}

#ifdef CHAKRA_BENCH_SIMDJSON
size_t walk(simdjson::ondemand::value v) {
  using Type = simdjson::ondemand::json_type;
  size_t values = 1;
  switch (v.type().value()) {
    case Type::object:
      for (auto field : v.get_object()) {
        std::string_view key = field.unescaped_key().value();
        (void)key;
        values += walk(field.value().value());
      }
      break;
    case Type::array:
      for (auto element : v.get_array()) values += walk(element.value());
      break;
    case Type::string: (void)v.get_string().value(); break;
    case Type::number: (void)v.get_double().value(); break;
    case Type::boolean: (void)v.get_bool().value(); break;
    case Type::null: break;
  }
  return values;
}
#endif

template <typename F>
double best_seconds(int runs, size_t& values, F&& parse) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    values = parse();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void row(const char* parser, double seconds, size_t bytes, size_t values) {
  std::printf("| %s | %.3f s | %.0f MB/s | %zu |\n", parser, seconds, double(bytes) / 1e6 / seconds, values);
}

}  // namespace

void compare_json_parsers(const std::string& path, int runs) {
  const std::string doc = chakra::read_file(path);
  std::printf(
      "\n== JSON parsing in memory, %s (%.1f MB), best of %d: every value visited, strings decoded\n\n"
      "| parser | time | speed | values |\n|---|---|---|---|\n",
      path.c_str(), double(doc.size()) / 1e6, runs);
  size_t values = 0;
  const double pull = best_seconds(runs, values, [&] {
    auto src = chakra::memory_input({reinterpret_cast<const uint8_t*>(doc.data()), doc.size()}, path);
    chakra::JsonPull j(*src, doc);
    std::string scratch;
    return walk(j, scratch);
  });
  row("chakra::JsonPull (ours)", pull, doc.size(), values);
#ifdef CHAKRA_BENCH_SIMDJSON
  // simdjson needs the whole document in a padded buffer; the copy is made once, untimed.
  const simdjson::padded_string padded(doc);
  simdjson::ondemand::parser on_demand;
  const double od = best_seconds(runs, values, [&] {
    auto document = on_demand.iterate(padded);
    return walk(document.get_value().value());
  });
  const std::string version = std::to_string(simdjson::SIMDJSON_VERSION_MAJOR) + "." +
                              std::to_string(simdjson::SIMDJSON_VERSION_MINOR) + "." +
                              std::to_string(simdjson::SIMDJSON_VERSION_REVISION);
  row(("simdjson " + version + " On-Demand").c_str(), od, doc.size(), values);
  simdjson::dom::parser dom;
  const double tree = best_seconds(runs, values, [&] { return dom.parse(padded).error() ? size_t{0} : size_t{1}; });
  row(("simdjson " + version + " DOM, parse only").c_str(), tree, doc.size(), values);
#else
  std::printf("| simdjson | not built: install libsimdjson-dev (.ci/setup-deps native) and reconfigure | | |\n");
#endif
}

}  // namespace bench
