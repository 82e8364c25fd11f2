// Platform::start_simulation for native hosts: the job runs on a std::thread, and poll(), called
// from the UI thread between frames, hands its progress and its result to the App.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "chakra/app/sim_job.h"

namespace chakra_web {

class App;

class SimThread {
 public:
  ~SimThread();
  // Starts `job`, first stopping a run still going (whose outcome is then never reported).
  void start(chakra::SimJob job);
  // Asks the run to stop and waits for it; nothing is reported for it afterwards.
  void cancel();
  // Reports progress and, once finished, the result or error to `app`.
  void poll(App& app);
  bool running() const { return thread_.joinable(); }

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> done_{0}, total_{0};
  std::atomic<bool> finished_{false};
  std::mutex mutex_;  // guards the outcome below, written once by the worker
  chakra::sim::SimResult result_;
  std::string error_;
};

}  // namespace chakra_web
