// The test suites' main: GoogleTest's, and what a test that reads the reference data in ../shared
// does where it is absent (a clone published on its own): shared_dir() throws SharedDataMissing,
// the test is counted as not run instead of failed, and the run ends with one line saying how
// many were not run and why. Never silently: with CHAKRA_REQUIRE_SHARED=1 (CI, which has the
// data) a test that could not run fails the run; tests/run adds up the counts it is given through
// CHAKRA_NOT_RUN_FILE.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

// The default printer, but for tests that stopped on missing reference data: those are neither
// shown as failed nor counted as run.
class NotRunWithoutShared : public testing::TestEventListener {
 public:
  explicit NotRunWithoutShared(testing::TestEventListener* printer) : printer_(printer) {}

  void OnTestProgramStart(const testing::UnitTest& u) override { printer_->OnTestProgramStart(u); }
  void OnTestIterationStart(const testing::UnitTest& u, int i) override { printer_->OnTestIterationStart(u, i); }
  void OnEnvironmentsSetUpStart(const testing::UnitTest& u) override { printer_->OnEnvironmentsSetUpStart(u); }
  void OnEnvironmentsSetUpEnd(const testing::UnitTest& u) override { printer_->OnEnvironmentsSetUpEnd(u); }
  void OnTestSuiteStart(const testing::TestSuite& s) override { printer_->OnTestSuiteStart(s); }
  void OnTestStart(const testing::TestInfo& t) override {
    testing_support::shared_data_missing_in_test = false;
    printer_->OnTestStart(t);
  }
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (!testing_support::shared_data_missing_in_test) printer_->OnTestPartResult(r);
  }
  void OnTestEnd(const testing::TestInfo& t) override {
    if (testing_support::shared_data_missing_in_test) {
      not_run.push_back(std::string(t.test_suite_name()) + "." + t.name());
      std::printf("[ NOT RUN  ] %s (it reads ../shared)\n", not_run.back().c_str());
      return;
    }
    if (t.result()->Failed()) failed.push_back(std::string(t.test_suite_name()) + "." + t.name());
    ++run;
    printer_->OnTestEnd(t);
  }
  void OnTestSuiteEnd(const testing::TestSuite& s) override { printer_->OnTestSuiteEnd(s); }
  void OnEnvironmentsTearDownStart(const testing::UnitTest& u) override { printer_->OnEnvironmentsTearDownStart(u); }
  void OnEnvironmentsTearDownEnd(const testing::UnitTest& u) override { printer_->OnEnvironmentsTearDownEnd(u); }
  void OnTestIterationEnd(const testing::UnitTest& u, int) override {
    std::printf("[==========] %d tests ran. (%lld ms total)\n[  PASSED  ] %d tests.\n", run,
                static_cast<long long>(u.elapsed_time()), run - static_cast<int>(failed.size()));
    if (!failed.empty()) {
      std::printf("[  FAILED  ] %zu tests, listed below:\n", failed.size());
      for (const std::string& f : failed) std::printf("[  FAILED  ] %s\n", f.c_str());
    }
  }
  void OnTestProgramEnd(const testing::UnitTest& u) override { printer_->OnTestProgramEnd(u); }

  int run = 0;
  std::vector<std::string> failed, not_run;

 private:
  std::unique_ptr<testing::TestEventListener> printer_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  auto* counting = new NotRunWithoutShared(listeners.Release(listeners.default_result_printer()));
  listeners.Append(counting);  // owned by gtest from here
  // The exit status is decided below, from what `counting` saw of each test.
  [[maybe_unused]] const int gtest_result = RUN_ALL_TESTS();
  const size_t not_run = counting->not_run.size();
  const bool required =
      std::getenv("CHAKRA_REQUIRE_SHARED") && std::string(std::getenv("CHAKRA_REQUIRE_SHARED")) == "1";
  if (not_run) {
    std::printf("[ NOT RUN  ] %zu tests: they read the reference data of ../shared, absent at %s%s\n", not_run,
                testing_support::shared_dir_path().c_str(),
                required ? " (CHAKRA_REQUIRE_SHARED=1: a failure)" : " (set CHAKRA_SHARED_DIR to run them)");
    if (const char* file = std::getenv("CHAKRA_NOT_RUN_FILE"))
      if (FILE* f = std::fopen(file, "a")) {
        std::fprintf(f, "%zu\n", not_run);
        std::fclose(f);
      }
  }
  return !counting->failed.empty() || (required && not_run) ? 1 : 0;
}
