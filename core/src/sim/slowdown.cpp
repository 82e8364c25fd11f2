// --slowdown specs: per-NPU compute and communication factors and start delays, per-dimension
// bandwidth factors (chakra/sim/simulate.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>

#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::sim {
namespace {

constexpr uint64_t kMaxIndex = 1u << 20;  // NPUs or dimensions a list may name

const auto trim = trim_blanks;

// The pieces between the separators, trimmed.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::string_view piece : Split(s, sep)) out.push_back(trim(piece));
  return out;
}

std::optional<uint64_t> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return std::stoull(std::string(s));
}

// "3", "0-7", "1,4-5": the indices in order; `all` (or `*`): nullopt, every index.
std::optional<std::vector<uint64_t>> index_list(std::string_view s,
                                                const std::function<void(const std::string&)>& fail) {
  if (s == "all" || s == "*") return std::nullopt;
  std::vector<uint64_t> out;
  for (std::string_view part : split(s, ',')) {
    const size_t dash = part.find('-');
    const auto a = whole_number(trim(part.substr(0, dash)));
    const auto b = dash == std::string_view::npos ? a : whole_number(trim(part.substr(dash + 1)));
    if (!a || !b || *b < *a) fail("'" + std::string(part) + "' is not a number or a range a-b");
    if (*b >= kMaxIndex) fail(std::string(part) + ": at most " + std::to_string(kMaxIndex - 1));
    for (uint64_t i = *a; i <= *b; ++i) out.push_back(i);
  }
  return out;
}

double factor_of(std::string_view v, const std::function<void(const std::string&)>& fail) {
  const std::string text(v);
  char* end = nullptr;
  const double k = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(k > 0) || !std::isfinite(k) || k > 1e6)
    fail("'" + text + "' is not a factor (a number > 0)");
  return k;
}

uint64_t delay_of(std::string_view v, const std::function<void(const std::string&)>& fail) {
  double unit = 1;
  for (auto [suffix, scale] : {std::pair{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}})
    if (v.size() > 2 && v.substr(v.size() - 2) == suffix) v.remove_suffix(2), unit = scale;
  const std::string text(trim(v));
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end) * unit;
  if (text.empty() || end != text.c_str() + text.size() || !(d >= 0) || !(d < 1e15))
    fail("'" + text + "' is not a delay (ns, or a number with ns, us or ms)");
  return static_cast<uint64_t>(std::llround(d));
}

// Applies f to the listed indices (created from `rest` as needed), or with `all` (nullopt) to
// every listed one and to `rest`.
template <typename T, typename F>
void apply(std::vector<T>& values, T& rest, const std::optional<std::vector<uint64_t>>& which, F f) {
  if (!which) {
    for (T& v : values) f(v);
    f(rest);
    return;
  }
  for (uint64_t i : *which) {
    if (values.size() <= i) values.resize(i + 1, rest);
    f(values[i]);
  }
}

}  // namespace

Slowdowns parse_slowdowns(std::string_view text, const std::string& source) {
  Slowdowns s;
  const bool lines = text.find('\n') != std::string_view::npos;
  uint64_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = trim(line.substr(0, hash));
    for (std::string_view entry : split(line, ';')) {
      if (entry.empty()) continue;
      const std::function<void(const std::string&)> fail = [&](const std::string& why) {
        throw Error(source + (lines ? ":" + std::to_string(line_no) : "") + ": slowdown '" + std::string(entry) +
                    "': " + why);
      };
      const std::vector<std::string_view> parts = split(entry, ':');
      const size_t eq = parts[0].find('=');
      const std::string_view what = eq == std::string_view::npos ? parts[0] : trim(parts[0].substr(0, eq));
      if ((what != "npu" && what != "dim") || eq == std::string_view::npos)
        fail("starts with npu=LIST or dim=LIST (npu=3:compute=1.5, dim=1:bandwidth=0.5)");
      if (parts.size() < 2)
        fail("no setting after the " + std::string(what) + " list (compute=, comm=, delay= or bandwidth=)");
      const auto which = index_list(trim(parts[0].substr(eq + 1)), fail);
      for (size_t i = 1; i < parts.size(); ++i) {
        const size_t e = parts[i].find('=');
        if (e == std::string_view::npos) fail("'" + std::string(parts[i]) + "' is not KEY=VALUE");
        const std::string_view key = trim(parts[i].substr(0, e)), value = trim(parts[i].substr(e + 1));
        if (what == "npu" && key == "compute") {
          const double k = factor_of(value, fail);
          apply(s.compute, s.compute_rest, which, [k](double& v) { v *= k; });
        } else if (what == "npu" && key == "comm") {
          const double k = factor_of(value, fail);
          apply(s.comm, s.comm_rest, which, [k](double& v) { v *= k; });
        } else if (what == "npu" && key == "delay") {
          const uint64_t d = delay_of(value, fail);
          apply(s.delay, s.delay_rest, which, [d](uint64_t& v) { v += d; });
        } else if (what == "dim" && key == "bandwidth") {
          const double k = factor_of(value, fail);
          apply(s.bandwidth, s.bandwidth_rest, which, [k](double& v) { v *= k; });
        } else {
          fail("'" + std::string(key) + "' is not a setting of " + std::string(what) +
               (what == "npu" ? " (compute, comm, delay)" : " (bandwidth)"));
        }
      }
    }
  }
  return s;
}

std::string format_slowdowns(const Slowdowns& s) {
  std::vector<std::string> entries;
  auto factors = [&](const char* what, const char* key, const std::vector<double>& values, double rest) {
    if (rest != 1) entries.push_back(std::string(what) + "=all:" + key + "=" + format_number(rest));
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] != rest)
        entries.push_back(std::string(what) + "=" + std::to_string(i) + ":" + key + "=" +
                          format_number(values[i] / rest));
  };
  factors("npu", "compute", s.compute, s.compute_rest);
  factors("npu", "comm", s.comm, s.comm_rest);
  if (s.delay_rest) entries.push_back("npu=all:delay=" + std::to_string(s.delay_rest));
  for (size_t i = 0; i < s.delay.size(); ++i)
    if (s.delay[i] != s.delay_rest)
      entries.push_back("npu=" + std::to_string(i) +
                        ":delay=" + std::to_string(s.delay[i] - std::min(s.delay[i], s.delay_rest)));
  factors("dim", "bandwidth", s.bandwidth, s.bandwidth_rest);
  std::string out;
  for (const std::string& e : entries) out += (out.empty() ? "" : "; ") + e;
  return out;
}

}  // namespace chakra::sim
