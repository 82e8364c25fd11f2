#include "sim_thread.h"

#include "app.h"
#include "chakra/app/sim_job.h"
#include "chakra/support/error.h"
#include "chakra/support/progress.h"

namespace chakra_web {

SimThread::~SimThread() { cancel(); }

void SimThread::start(chakra::SimJob job) {
  cancel();
  stop_ = false;
  finished_ = false;
  done_ = 0;
  total_ = 0;
  thread_ = std::thread([this, job = std::move(job)] {
    struct Relay : chakra::Progress {
      SimThread& owner;
      explicit Relay(SimThread& o) : owner(o) {}
      bool report(std::string_view, uint64_t done, uint64_t total) override {
        owner.done_ = done;
        owner.total_ = total;
        return !owner.stop_;
      }
    } relay(*this);
    chakra::sim::SimResult result;
    std::string error;
    try {
      result = chakra::run_job(job, &relay);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    result_ = std::move(result);
    error_ = std::move(error);
    finished_ = true;
  });
}

void SimThread::cancel() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  finished_ = false;
}

void SimThread::poll(App& app) {
  if (!thread_.joinable()) return;
  if (!finished_) {
    app.simulation_progress(done_, total_);
    return;
  }
  thread_.join();
  finished_ = false;
  chakra::sim::SimResult result;
  std::string error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result = std::move(result_);
    result_ = {};
    error.swap(error_);
  }
  if (error.empty())
    app.simulation_finished(std::move(result));
  else
    app.simulation_failed(error);
}

}  // namespace chakra_web
