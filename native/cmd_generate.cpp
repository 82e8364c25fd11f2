// chakra generate (the reference microbenchmarks, or one collective per NPU), and the drop-in
// chakra_generator.
#include <filesystem>
#include <iostream>
#include <memory>

#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

int write_microbenchmarks(const chakra::MicrobenchmarkOptions& o, const std::string& dir) {
  if (o.num_npus == 0) throw chakra::Error("the number of NPUs must be at least 1");
  if (!dir.empty()) fs::create_directories(dir);
  cli::EtFileSet files;
  chakra::generate_microbenchmarks(o, [&](std::string_view name, uint32_t npu, const chakra::Trace& t) {
    files.add((dir.empty() ? "" : dir + "/") + std::string(name) + "." + std::to_string(npu) + ".et", t);
  });
  files.commit();
  return cli::kOk;
}

int run_microbenchmarks(const cli::Args& a) {
  chakra::MicrobenchmarkOptions o;
  o.num_npus = static_cast<uint32_t>(a.get_uint("--num-npus", UINT32_MAX));
  o.runtime = a.get_uint("--runtime");
  o.tensor_size = a.get_uint("--tensor-size");
  o.comm_size = static_cast<int64_t>(a.get_uint("--comm-size", INT64_MAX));
  int rc = write_microbenchmarks(o, a.get("--output"));
  std::cerr << "chakra generate: wrote 14 traces for each of " << o.num_npus << " NPUs into "
            << (a.get("--output").empty() ? "." : a.get("--output")) << "\n";
  return rc;
}

int run_collective(const cli::Args& a) {
  chakra::CollectiveOptions o;
  o.type = cli::collective_option(a, "--type", a.get("--type"));
  std::optional<uint64_t> size = chakra::parse_size(a.get("--size"));
  if (!size) a.fail("--size: '" + a.get("--size") + "' is not a size (e.g. 1048576, 64KiB, 1MiB, 2GB)");
  o.size = *size;
  o.npus = static_cast<uint32_t>(a.get_uint("--npus", UINT32_MAX));
  o.count = static_cast<uint32_t>(a.get_uint("--count", UINT32_MAX));
  if (o.npus == 0) a.fail("--npus must be at least 1");
  if (o.count == 0) a.fail("--count must be at least 1");
  o.name = a.get("--name");
  const std::string prefix = a.get("--output");
  cli::create_output_folder(prefix);
  cli::EtFileSet files;
  cli::TerminalProgress progress;
  for (uint32_t npu = 0; npu < o.npus; ++npu) {
    if (!progress.report("writing traces", npu, o.npus)) throw chakra::Cancelled();
    files.add(prefix + "." + std::to_string(npu) + ".et", chakra::collective_trace(o, npu));
  }
  files.commit();
  progress.clear();
  return cli::kOk;
}

int collective_command(int argc, char** argv) {
  cli::Args args("chakra generate collective",
                 "One collective (or a chain of them) per NPU: PREFIX.{npu}.et, the microbenchmark\n"
                 "workloads ASTRA-sim ships (examples/workload/microbenchmarks), byte for byte.\n"
                 "Sizes take binary units: 1MiB = 1MB = 1048576 bytes.");
  args.option("--type", "TYPE",
              "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, scatter, barrier",
              "all_reduce");
  args.option("--size", "SIZE", "comm_size in bytes (units B, KiB, MiB, GiB)", "1MiB");
  args.option("--npus", "N", "number of NPUs (files)", "", true);
  args.option("--count", "K", "collectives per NPU, each after the previous", "1");
  args.option("--name", "NAME", "node name (default <type>_<N>npus_<size>)");
  args.option("--output", "PREFIX", "output prefix: PREFIX.{npu}.et", "", true);
  args.alias("-o", "--output");
  args.parse(argc, argv);
  return cli::run_guarded("chakra generate collective", run_collective, args);
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  if (argc > 0 && std::string(argv[0]) == "collective") return collective_command(argc - 1, argv + 1);
  cli::Args args("chakra generate",
                 "Synthetic traces. Without a kind: the 14 microbenchmark cases of mlcommons/chakra's\n"
                 "chakra_generator, one file per NPU (<case>.<npu>.et), the same bytes. With\n"
                 "'collective': one collective per NPU (see 'chakra generate collective -h').");
  args.option("--num-npus", "N", "number of NPUs", "64");
  args.option("--runtime", "US", "duration_micros of compute nodes", "5");
  args.option("--tensor-size", "BYTES", "tensor_size of memory and send/recv nodes", "1024");
  args.option("--comm-size", "BYTES", "comm_size of collectives", "65536");
  args.option("--output", "DIR", "folder to write into (default: the current one)");
  args.alias("-o", "--output");
  args.parse(argc, argv);
  return cli::run_guarded("chakra generate", run_microbenchmarks, args);
}

namespace {

int run_reference_generator(const cli::Args& a) {
  chakra::MicrobenchmarkOptions o;
  o.num_npus = static_cast<uint32_t>(a.get_uint("--num_npus", UINT32_MAX));
  o.runtime = a.get_uint("--default_runtime");
  o.tensor_size = a.get_uint("--default_tensor_size");
  o.comm_size = static_cast<int64_t>(a.get_uint("--default_comm_size", INT64_MAX));
  return write_microbenchmarks(o, "");
}

}  // namespace

// chakra_generator [--num_npus N] [--default_runtime R] [--default_tensor_size S] [--default_comm_size C]
int cmd_reference_generator(int argc, char** argv) {
  cli::Args args("chakra_generator", "Execution Trace Generator");
  args.allow_abbreviations();
  args.option("--num_npus", "NUM_NPUS", "Number of NPUs", "64");
  args.option("--default_runtime", "DEFAULT_RUNTIME", "Default runtime of compute nodes", "5");
  args.option("--default_tensor_size", "DEFAULT_TENSOR_SIZE", "Default tensor size of memory nodes", "1024");
  args.option("--default_comm_size", "DEFAULT_COMM_SIZE", "Default communication size of communication nodes", "65536");
  args.parse(argc, argv);
  return cli::run_guarded("chakra_generator", run_reference_generator, args);
}

CHAKRA_COMMAND(190, "generate", cmd_generate,
               "synthetic traces: the reference microbenchmarks, or one collective per NPU");
CHAKRA_ALIAS("chakra_generator", cmd_reference_generator);
