// The suite's leaderboard (chakra/app/suite.h): results of one suite ranked by overall score.
#include <algorithm>
#include <numeric>
#include <set>

#include "chakra/app/suite.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::suite {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string html_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string score_text(double score) {
  std::string out;
  appendf(out, "%.3f", score);
  return out;
}

}  // namespace

Board make_board(const std::vector<Json>& results, const std::vector<std::string>& sources) {
  if (results.empty()) throw Error("suite board: no results");
  std::vector<size_t> order(results.size());
  std::iota(order.begin(), order.end(), 0);
  std::set<std::string> systems;
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    if (!r.is_object() || !r.contains("suite") || !r.contains("suite_hash") || !r.contains("overall") ||
        !r.contains("classes") || !r.contains("system"))
      throw Error(sources[i] + ": not a suite result");
    if (r["suite"] != results[0]["suite"] || r["suite_hash"] != results[0]["suite_hash"])
      throw Error(sources[i] + ": a result of " + r["suite"].get<std::string>() + " (definition " +
                  r["suite_hash"].get<std::string>().substr(0, 12) + "), " + sources[0] + " one of " +
                  results[0]["suite"].get<std::string>() + " (definition " +
                  results[0]["suite_hash"].get<std::string>().substr(0, 12) + "): a board ranks one suite's results");
    if (!systems.insert(r["system"]["hash"].get<std::string>()).second)
      throw Error(sources[i] + ": the same system as another result on the board");
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return results[a]["overall"].get<double>() > results[b]["overall"].get<double>();
  });
  Board board;
  for (size_t i : order) board.results.push_back(results[i]), board.sources.push_back(sources[i]);
  for (const auto& [name, score] : results[0]["classes"].items()) board.classes.push_back(name);
  return board;
}

std::string board_csv(const Board& b) {
  std::string out = "rank,system,overall";
  for (const std::string& c : b.classes) out += "," + csv_field(c);
  out += ",system_hash,suite,tool\n";
  for (size_t i = 0; i < b.results.size(); ++i) {
    const Json& r = b.results[i];
    out += std::to_string(i + 1) + "," + csv_field(r["system"]["name"].get<std::string>()) + "," +
           score_text(r["overall"].get<double>());
    for (const std::string& c : b.classes) out += "," + score_text(r["classes"][c].get<double>());
    out += "," + r["system"]["hash"].get<std::string>() + "," + csv_field(r["suite"].get<std::string>()) + "," +
           csv_field(r["tool"].get<std::string>()) + "\n";
  }
  return out;
}

std::string board_markdown(const Board& b) {
  const Json& first = b.results.front();
  std::string out = "# " + first["suite"].get<std::string>() + " leaderboard\n\nScores are speed-ups over the " +
                    "suite's reference system (geometric means; higher is better).\n\n| rank | system | overall |";
  for (const std::string& c : b.classes) out += " " + c + " |";
  out += "\n|---:|---|---:|";
  for (size_t i = 0; i < b.classes.size(); ++i) out += "---:|";
  out += "\n";
  for (size_t i = 0; i < b.results.size(); ++i) {
    const Json& r = b.results[i];
    std::string name = r["system"]["name"].get<std::string>();
    std::replace(name.begin(), name.end(), '|', '/');
    out += "| " + std::to_string(i + 1) + " | " + name + " | " + score_text(r["overall"].get<double>()) + " |";
    for (const std::string& c : b.classes) out += " " + score_text(r["classes"][c].get<double>()) + " |";
    out += "\n";
  }
  return out;
}

std::string board_html(const Board& b) {
  const Json& first = b.results.front();
  double best = 0;
  for (const Json& r : b.results) best = std::max(best, r["overall"].get<double>());
  const std::string title = html_escaped(first["suite"].get<std::string>()) + " leaderboard";
  std::string out =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title +
      "</title>\n<style>body{font:15px/1.4 system-ui,sans-serif;margin:2em;color:#1b1b1b}"
      "table{border-collapse:collapse}th,td{padding:.35em .8em;border-bottom:1px solid #ddd;text-align:right}"
      "th:nth-child(2),td:nth-child(2){text-align:left}.bar{display:inline-block;height:.8em;background:#3b7dd8;"
      "margin-right:.5em;vertical-align:middle}</style></head><body>\n<h1>" +
      title +
      "</h1>\n<p>Scores are speed-ups over the suite's reference system (geometric means; higher is "
      "better). Definition " +
      html_escaped(first["suite_hash"].get<std::string>().substr(0, 12)) +
      ".</p>\n<table><thead><tr><th>rank</th><th>system</th><th>overall</th>";
  for (const std::string& c : b.classes) out += "<th>" + html_escaped(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (size_t i = 0; i < b.results.size(); ++i) {
    const Json& r = b.results[i];
    const double overall = r["overall"].get<double>();
    std::string bar;
    appendf(bar, "<span class=\"bar\" style=\"width:%.0fpx\"></span>", best > 0 ? 120 * overall / best : 0);
    out += "<tr><td>" + std::to_string(i + 1) + "</td><td>" + html_escaped(r["system"]["name"].get<std::string>()) +
           "</td><td>" + bar + score_text(overall) + "</td>";
    for (const std::string& c : b.classes) out += "<td>" + score_text(r["classes"][c].get<double>()) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n</body></html>\n";
}

std::string board_json(const Board& b) {
  const Json& first = b.results.at(0);
  std::string out = "{\"suite_board\": " + first["suite"].dump() + ", \"suite_hash\": " + first["suite_hash"].dump() +
                    ", \"sources\": " + Json(b.sources).dump() + ", \"results\": [\n";
  for (size_t i = 0; i < b.results.size(); ++i) out += (i ? ",\n" : "") + b.results[i].dump();
  return out + "\n]}\n";
}

Board read_board(std::string_view text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(source + ": not a suite board (not JSON: " + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("suite_board") || !j.value("results", Json()).is_array() || j["results"].empty() ||
      !j.value("sources", Json()).is_array() || j["sources"].size() != j["results"].size())
    throw Error(source + ": not a suite board (suite_board, results and their sources)");
  std::vector<Json> results;
  std::vector<std::string> sources;
  for (size_t i = 0; i < j["results"].size(); ++i) {
    const Json& name = j["sources"][i];
    sources.push_back(source + ": " +
                      (name.is_string() ? name.get<std::string>() : "results[" + std::to_string(i) + "]"));
    results.push_back(checked_result(j["results"][i], sources.back()));
  }
  return make_board(results, sources);
}

}  // namespace chakra::suite
