#include "cli_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

namespace cli_testing {

std::string assets(const std::string& relative) { return std::string(CHAKRA_SOURCE_DIR) + "/assets/" + relative; }

Result run(const std::vector<std::string>& args, const std::string& program, const std::string& cwd) {
  const std::string dir = testing_support::temp_dir();
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), testing_support::read_raw(out_path),
          testing_support::read_raw(err_path)};
}

}  // namespace cli_testing
