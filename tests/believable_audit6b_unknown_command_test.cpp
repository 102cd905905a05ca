// Findings a user can believe (issue 12, item 0), left by the twelfth audit: `ttap explain
// --help` printed the main help and exited 0, as if `explain` were a command (CLI11 reads
// --help before it looks at the word). An unknown command is bad input, with or without
// --help: one line `ttap: error: ...`, exit 2 (README, exit codes); every real command's
// --help still exits 0.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "suite_support.hpp"

namespace {

using ttap::suite::ProcResult;
using ttap::suite::run_ttap;

TEST(BelievableAudit6bUnknownCommand, IsBadInputWithOrWithoutHelp) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"explain", "--help"}, {"explain"}, {"explain", "x"}, {"-v", "explain", "--help"}, {"--strict", "explain", "-h"}}) {
    const ProcResult r = run_ttap(args);
    const std::string line = args.front() + (args.size() > 1 ? " " + args[1] : "");
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << line << ": no help on stdout\n" << r.out;
    EXPECT_EQ(r.err.rfind("ttap: error: unknown command \"explain\"", 0), 0u) << line << "\n" << r.err;
    EXPECT_EQ(ttap::suite::count_lines(r.err), 1u) << line << "\n" << r.err;
  }
}

TEST(BelievableAudit6bUnknownCommand, EveryCommandsHelpStillExitsZero) {
  for (const char* command : {"tree", "summary", "diff", "collectives", "replay", "features", "tokenizer", "eval", "analyze", "merge"}) {
    const ProcResult r = run_ttap({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << command << "\n" << r.out;
  }
  const ProcResult main_help = run_ttap({"--help"});
  EXPECT_EQ(main_help.exit_code, 0);
  EXPECT_NE(main_help.out.find("Subcommands:"), std::string::npos);
}

}  // namespace
