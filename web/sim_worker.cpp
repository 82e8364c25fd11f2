// Web Worker entry point: runs the simulation jobs and rank conversions (linking and converting
// a PyTorch rank) the page posts (see sim_worker_pre.js and sim_client.js), so long work neither
// blocks the page nor needs threads in the page's module. Cancelling a simulation is the page
// terminating this worker; conversions run in workers of their own.
#include <emscripten.h>

#include <string>
#include <string_view>

#include "chakra/app/rank_conversion.h"
#include "chakra/app/sim_job.h"
#include "chakra/app/suite.h"
#include "chakra/support/progress.h"

// The EM_ASM blocks below hold JavaScript, which clang-format would break.
// clang-format off

EM_JS(void, post_progress, (double done, double total), { postMessage({progress: [done, total]}); });
EM_JS(void, post_result, (const char* data, size_t size), {
  const bytes = HEAPU8.slice(data, data + size);
  postMessage({result: bytes}, [bytes.buffer]);
});
EM_JS(void, post_error, (const char* message), { postMessage({error: UTF8ToString(message)}); });
EM_JS(void, post_converted, (const char* data, size_t size), {
  const bytes = HEAPU8.slice(data, data + size);
  postMessage({converted: bytes}, [bytes.buffer]);
});

namespace {
// At most ten progress messages a second: the page only draws a bar.
class Relay : public chakra::Progress {
 public:
  bool report(std::string_view, uint64_t done, uint64_t total) override {
    double now = emscripten_get_now();
    if (now - last_ >= 100) {
      last_ = now;
      post_progress(static_cast<double>(done), static_cast<double>(total));
    }
    return true;
  }

 private:
  double last_ = 0;
};
}  // namespace

extern "C" EMSCRIPTEN_KEEPALIVE void sim_worker_run(const char* job, size_t size) {
  Relay relay;
  try {
    namespace sim = chakra::sim;
    std::string result = chakra::encode_result(chakra::run_job(chakra::decode_job(std::string_view(job, size)), &relay));
    post_result(result.data(), result.size());
  } catch (const std::exception& e) {
    post_error(e.what());
  }
}

// One point of a sweep (a simulation job without spans): its result and the simulator's time.
EM_JS(void, post_swept, (const char* data, size_t size, double ms), {
  const bytes = HEAPU8.slice(data, data + size);
  postMessage({swept: bytes, ms: ms}, [bytes.buffer]);
});
extern "C" EMSCRIPTEN_KEEPALIVE void sweep_worker_run(const char* job, size_t size) {
  try {
    namespace sim = chakra::sim;
    const double start = emscripten_get_now();
    const sim::SimResult r = chakra::run_job(chakra::decode_job(std::string_view(job, size)));
    const double ms = emscripten_get_now() - start;
    std::string result = chakra::encode_result(r);
    post_swept(result.data(), result.size(), ms);
  } catch (const std::exception& e) {
    post_error(e.what());
  }
}

// One entry of the benchmark suite (chakra::suite::entry_job's text): its rows on each system as
// a JSON array, or an error message.
EM_JS(void, post_suite_rows, (const char* rows), { postMessage({suite_rows: UTF8ToString(rows)}); });
extern "C" EMSCRIPTEN_KEEPALIVE void suite_worker_run(const char* job, size_t size) {
  try {
    chakra::suite::Json rows = chakra::suite::Json::array();
    for (auto& r : chakra::suite::run_entry_job(std::string_view(job, size))) rows.push_back(std::move(r));
    post_suite_rows(rows.dump().c_str());
  } catch (const std::exception& e) {
    post_error(e.what());
  }
}

// A rank conversion (chakra::encode_conversion bytes): its result, or an error message.
extern "C" EMSCRIPTEN_KEEPALIVE void convert_worker_run(const char* job, size_t size) {
  try {
    std::string result = chakra::encode_converted(chakra::convert_rank(chakra::decode_conversion(std::string_view(job, size))));
    post_converted(result.data(), result.size());
  } catch (const std::exception& e) {
    post_error(e.what());
  }
}

int main() { return 0; }
