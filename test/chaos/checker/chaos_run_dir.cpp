// Reading a run directory (chaos_run_dir.hpp).

#include "chaos_run_dir.hpp"

#include <fstream>
#include <iterator>
#include <system_error>

namespace troupe::chaos {

namespace {

namespace fs = std::filesystem;

// The file's bytes; empty if it cannot be read.
std::string read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

} // namespace

chaos_input read_run_dir(const fs::path& dir) {
  chaos_input in;
  std::error_code ec;
  for (fs::directory_iterator i{dir / "history", ec}, end; !ec && i != end;
       i.increment(ec))
    if (i->is_regular_file(ec) && i->path().extension() == ".jsonl")
      in.history.emplace(i->path().filename().string(), read_file(i->path()));
  in.nemesis_jsonl = read_file(dir / file_names::nemesis);
  in.client_log = read_file(dir / file_names::client);
  in.ledger_jsonl = read_file(dir / file_names::ledger);
  in.journal_jsonl = read_file(dir / file_names::journal);
  return in;
}

} // namespace troupe::chaos
