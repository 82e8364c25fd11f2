#include "side_by_side.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <unistd.h>  // sync

#include "bench_support.h"
#include "json_parsers.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace bench {
namespace {

namespace fs = std::filesystem;

const std::string kShared = CHAKRA_SHARED_DIR;

bool same_bytes(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  std::vector<char> ba(1 << 20), bb(1 << 20);
  while (true) {
    fa.read(ba.data(), ba.size());
    fb.read(bb.data(), bb.size());
    if (fa.gcount() != fb.gcount() || !std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
    if (fa.gcount() == 0) return true;
  }
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1 ? "%.3f" : s < 10 ? "%.2f" : "%.1f", s);
  return buf;
}

// One tool on one input: the reference's arguments (after `run-reference TOOL`) and our
// program (a drop-in's name, or chakra) with its arguments; "{out}" stands for the output file.
struct Row {
  std::string label, tool;
  std::vector<std::string> reference_args;
  std::string program;
  std::vector<std::string> our_args;
  std::string output_ext;
};

std::vector<std::string> with_output(const std::vector<std::string>& args, const std::string& out) {
  std::vector<std::string> v;
  for (const std::string& a : args) v.push_back(a == "{out}" ? out : a);
  return v;
}

struct Side {
  std::vector<double> cpu;
  uint64_t peak_rss = 0;
  bool failed = false;
};

void record(Side& s, const ChildRun& r) {
  s.cpu.push_back(r.cpu_s);
  s.peak_rss = std::max(s.peak_rss, r.max_rss_bytes);
  if (r.exit_code != 0) s.failed = true;
}

}  // namespace

bool side_by_side(const SideBySideOptions& options) {
  // Absolute paths: every tool runs in the work folder (the reference converter writes its log
  // into the current one).
  SideBySideOptions o = options;
  fs::create_directories(o.work);
  o.work = fs::absolute(o.work).lexically_normal().string();
  o.chakra = fs::absolute(o.chakra).lexically_normal().string();
  const std::string run_reference = kShared + "/reference/chakra/runnable/run-reference";
  const std::string bin_dir = fs::path(o.chakra).parent_path().string();
  const std::string x = "x" + std::to_string(o.copies);

  // Inputs: the ResNet rank's .et and linked JSON replicated, and the visualizer's 3,664-node
  // trace, uncompressed (the reference tools read plain files).
  const std::string et = o.work + "/resnet_" + x + ".et";
  chakra::write_et(replicate(kShared + "/reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz", o.copies), et);
  const std::string linked_x1 = o.work + "/linked_x1.json", linked_xn = o.work + "/linked_" + x + ".json";
  const std::string linked = kShared + "/reference/chakra/outputs/trace_link/resnet_2gpu_rank1.linked.json.gz";
  write_replicated_linked_json(linked, 1, linked_x1);
  if (o.copies > 1) write_replicated_linked_json(linked, o.copies, linked_xn);
  const std::string small_et = o.work + "/chakra.0.et";
  {
    chakra::OutputFile out(small_et, chakra::Compression::None);
    out.write(chakra::read_file(kShared + "/reference/chakra/inputs/chakra.0.et.gz"));
    out.commit();
  }

  // The jsonizer and visualizer against their drop-ins (same flags); the converter against
  // `chakra convert pytorch --reference-bytes` (its drop-in writes our corrected traces).
  std::vector<Row> rows = {
      {"jsonize " + x + " .et → reference JSON",
       "jsonizer",
       {"--input_filename", et, "--output_filename", "{out}"},
       "chakra_jsonizer",
       {"--input_filename", et, "--output_filename", "{out}"},
       ".json"},
      {"convert pytorch, linked ResNet rank",
       "converter",
       {"PyTorch", "--input", linked_x1, "--output", "{out}"},
       "chakra",
       {"convert", "pytorch", linked_x1, "-o", "{out}", "--reference-bytes"},
       ".et"},
  };
  if (o.copies > 1)
    rows.push_back({"convert pytorch, its " + x + " copy",
                    "converter",
                    {"PyTorch", "--input", linked_xn, "--output", "{out}"},
                    "chakra",
                    {"convert", "pytorch", linked_xn, "-o", "{out}", "--reference-bytes"},
                    ".et"});
  rows.push_back({"visualize chakra.0 (3,664 nodes) → GraphML",
                  "visualizer",
                  {"--input_filename", small_et, "--output_filename", "{out}"},
                  "chakra_visualizer",
                  {"--input_filename", small_et, "--output_filename", "{out}"},
                  ".graphml"});

  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf(
      "\n== side by side, %s, %s: mlcommons/chakra 1.0.0 (Python 3, unmodified) against chakra's drop-ins,\n"
      "   %d run%s each, alternating; CPU = user + system seconds of the process (kernel figures)\n\n",
      date, cpu_model().c_str(), o.runs, o.runs == 1 ? "" : "s");
  std::printf(
      "| run | reference CPU min / median | chakra CPU min / median | median of per-run ratios | "
      "reference peak RSS | chakra peak RSS | output |\n|---|---|---|---|---|---|---|\n");
  bool ok = true;
  // This machine's speed against the one the reference timings were recorded on, for the linker
  // rows: the reference converter's median here over its recorded time on the same input.
  double reference_slowdown = 0;
  for (const Row& row : rows) {
    Side ref, ours;
    std::vector<double> ratios;
    const std::string ref_out = o.work + "/sbs_reference" + row.output_ext,
                      our_out = o.work + "/sbs_chakra" + row.output_ext;
    std::vector<std::string> ref_argv = {run_reference, row.tool};
    for (const std::string& a : with_output(row.reference_args, ref_out)) ref_argv.push_back(a);
    std::vector<std::string> our_argv = {bin_dir + "/" + row.program};
    for (const std::string& a : with_output(row.our_args, our_out)) our_argv.push_back(a);
    for (int i = 0; i < o.runs; ++i) {
      // Outputs of the previous run are removed untimed: dropping a large file's cached pages
      // costs the process that unlinks or truncates it up to a second of kernel time.
      fs::remove(ref_out);
      fs::remove(our_out);
      // The earlier runs' outputs (hundreds of MB for the 16x rows) are written back untimed
      // too: writeback overlapping a timed run competes with it for this machine's two cores.
      sync();
      // alternate which goes first, so neither always runs on a warmer cache
      ChildRun a, b;
      if (i % 2 == 0)
        a = run_child(ref_argv, o.work), b = run_child(our_argv, o.work);
      else
        b = run_child(our_argv, o.work), a = run_child(ref_argv, o.work);
      record(ref, a);
      record(ours, b);
      ratios.push_back(a.cpu_s / b.cpu_s);
    }
    const bool identical = !ref.failed && !ours.failed && same_bytes(ref_out, our_out);
    std::printf("| %s | %s / %s s | %s / %s s | **%.1f×** | %s | %s (%.2f×) | %s |\n", row.label.c_str(),
                seconds(*std::min_element(ref.cpu.begin(), ref.cpu.end())).c_str(), seconds(median(ref.cpu)).c_str(),
                seconds(*std::min_element(ours.cpu.begin(), ours.cpu.end())).c_str(), seconds(median(ours.cpu)).c_str(),
                median(ratios), chakra::format_bytes(ref.peak_rss).c_str(), chakra::format_bytes(ours.peak_rss).c_str(),
                double(ours.peak_rss) / double(std::max<uint64_t>(ref.peak_rss, 1)),
                ref.failed    ? "reference failed"
                : ours.failed ? "chakra failed"
                : identical   ? "byte-identical"
                              : "DIFFERENT");
    ok = ok && identical;
    if (&row == &rows[1] && !ref.failed && reference_cpu_seconds("convert_resnet_2gpu_rank1_linked") > 0)
      reference_slowdown = median(ref.cpu) / reference_cpu_seconds("convert_resnet_2gpu_rank1_linked");
    fs::remove(ref_out);
    fs::remove(our_out);
  }

  // The linker: the reference needs HTA and PARAM (not packaged for Debian), so its figures are
  // the recorded ones (timings.tsv, another machine); ours are measured here.
  const std::string host_in = kShared + "/reference/chakra/inputs/link/resnet_2gpu_rank1_host_et.json.gz";
  const std::string kineto_in = kShared + "/reference/chakra/inputs/link/resnet_2gpu_rank1_kineto.synthetic.json.gz";
  struct LinkRow {
    std::string label, recorded;
    int copies;
  };
  std::vector<LinkRow> links = {{"link ResNet rank-1 pair", "link_resnet_2gpu_rank1", 1}};
  if (o.copies > 1)
    links.push_back({"link its " + x + " copy (one process root)", "link_resnet_x16_scaling", o.copies});
  for (const LinkRow& l : links) {
    const std::string host = o.work + "/sbs_host.json", kineto = o.work + "/sbs_kineto.json",
                      out = o.work + "/sbs_linked.json";
    const uint64_t events = write_replicated_link_inputs(host_in, kineto_in, l.copies, host, kineto);
    Side ours;
    for (int i = 0; i < o.runs; ++i) {
      fs::remove(out);
      sync();
      record(ours, run_child({o.chakra, "link", "--host", host, "--device", kineto, "-o", out}, o.work));
    }
    const double ref_cpu = reference_cpu_seconds(l.recorded), ref_rss = reference_rss_kb(l.recorded) * 1024;
    std::string note = "recorded reference figure (timings.tsv)";
    if (l.copies == 16)
      note =
          "recorded figure of the reference on the older 16× input, where it linked copy 0 alone (each copy had its "
          "own root): less work than this input, so the ratio understates";
    else if (l.copies > 1)
      note = "no recorded reference figure for this size";
    // The recorded figure is from another machine: the ratio is also given with it scaled by how
    // much slower (or faster) the reference converter ran here than where it was recorded.
    std::string ratio = "—";
    if (ref_cpu > 0 && l.copies <= 16) {
      ratio = "**" + seconds(ref_cpu / median(ours.cpu)) + "×**";
      if (reference_slowdown > 0)
        ratio += " (" + seconds(ref_cpu * reference_slowdown / median(ours.cpu)) + "× with the recorded figure ×" +
                 seconds(reference_slowdown) + ", the reference converter's speed here)";
    }
    std::printf("| %s (%llu Kineto events) | %s s recorded | %s / %s s | %s | %s recorded | %s (%.2f×) | %s |\n",
                l.label.c_str(), static_cast<unsigned long long>(events), ref_cpu > 0 ? seconds(ref_cpu).c_str() : "—",
                seconds(*std::min_element(ours.cpu.begin(), ours.cpu.end())).c_str(), seconds(median(ours.cpu)).c_str(),
                ratio.c_str(), ref_rss > 0 ? chakra::format_bytes(uint64_t(ref_rss)).c_str() : "—",
                chakra::format_bytes(ours.peak_rss).c_str(), ref_rss > 0 ? double(ours.peak_rss) / ref_rss : 0.0,
                note.c_str());
    ok = ok && !ours.failed;
    for (const std::string& f : {host, kineto, out}) fs::remove(f);
  }
  compare_json_parsers(linked_x1, std::max(o.runs, 3));
  for (const std::string& f : {et, linked_x1, linked_xn, small_et, o.work + "/debug.log"}) fs::remove(f);
  return ok;
}

}  // namespace bench
