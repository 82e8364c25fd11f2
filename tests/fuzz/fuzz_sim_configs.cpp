// ASTRA-sim configs: the first byte picks network YAML, system JSON, comm-group JSON,
// remote-memory JSON or a --slowdown spec; the rest is the file. A config that parses must also
// write and read back.
#include "chakra/sim/simulate.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body = fuzz_support::text(data + 1, size - 1);
  namespace sim = chakra::sim;
  namespace astra = chakra::astra;
  fuzz_support::expect_clean([&] {
    switch (data[0] % 5) {
      case 0: {
        astra::NetworkConfig net = astra::parse_network(body, "fuzz.yml");
        astra::parse_network(astra::format_network(net), "fuzz.yml (written back)");
        break;
      }
      case 1: {
        astra::SystemConfig sys = astra::parse_system(body, "fuzz.json");
        astra::parse_system(astra::format_system(sys), "fuzz.json (written back)");
        break;
      }
      case 2: astra::parse_comm_groups(body, "fuzz_groups.json"); break;
      case 3: astra::parse_remote_memory(body, "fuzz_memory.json"); break;
      case 4: {
        const sim::Slowdowns s = sim::parse_slowdowns(body, "fuzz slowdowns");
        sim::parse_slowdowns(sim::format_slowdowns(s), "fuzz slowdowns (written back)");
        break;
      }
    }
  });
  return 0;
}
