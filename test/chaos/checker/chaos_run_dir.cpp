// Reading a run directory (chaos_run_dir.hpp).

#include "chaos_run_dir.hpp"

#include <array>
#include <cerrno>
#include <optional>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace troupe::chaos {

namespace {

namespace fs = std::filesystem;

std::string words(const fs::path& p) {
  return printable(p.string());
}

// A file type other than a regular file or a directory, for an error.
const char* type_words(fs::file_type t) {
  switch (t) {
    case fs::file_type::regular:
      return "a regular file";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    default:
      return "of an unknown type";
  }
}

std::string unreadable(const fs::path& p, int error) {
  return fmt::format("{} cannot be read: {}", words(p),
                     std::error_code{error, std::generic_category()}.message());
}

// The bytes of the regular file at `path` (opened non-blocking: a FIFO
// swapped in after the status check is not waited on); nullopt with the
// error added when it cannot be read.
std::optional<std::string> read_open(const fs::path& path,
                                     std::vector<std::string>& errors) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    errors.push_back(unreadable(path, errno));
    return std::nullopt;
  }
  std::optional<std::string> out{std::in_place};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    errors.push_back(unreadable(path, errno));
    out.reset();
  } else if (!S_ISREG(st.st_mode)) {
    errors.push_back(fmt::format("{} is not a regular file", words(path)));
    out.reset();
  }
  std::array<char, 65536> buf;
  while (out) {
    auto n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      out->append(buf.data(), static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      errors.push_back(unreadable(path, errno));
      out.reset();
    }
  }
  ::close(fd);
  return out;
}

// The file at `path` if its status says it is a regular file, else the
// error: `if_missing` when there is nothing at `path`.
std::string read_file(const fs::path& path, const std::string& if_missing,
                      std::vector<std::string>& errors) {
  std::error_code ec;
  auto type = fs::status(path, ec).type();
  if (type == fs::file_type::not_found) {
    errors.push_back(fmt::format("{} {}", words(path), if_missing));
    return {};
  }
  if (ec) {
    errors.push_back(unreadable(path, ec.value()));
    return {};
  }
  if (type != fs::file_type::regular) {
    errors.push_back(fmt::format("{} is {}, not a regular file", words(path),
                                 type_words(type)));
    return {};
  }
  return read_open(path, errors).value_or(std::string{});
}

// The history files, by name, into `in`.
void read_history(const fs::path& dir, const std::string& if_missing,
                  run_dir_contents& out) {
  std::error_code ec;
  auto type = fs::status(dir, ec).type();
  if (type != fs::file_type::directory) {
    out.errors.push_back(type == fs::file_type::not_found
                           ? fmt::format("{} {}", words(dir), if_missing)
                         : ec ? unreadable(dir, ec.value())
                              : fmt::format("{} is {}, not a directory",
                                            words(dir), type_words(type)));
    return;
  }
  fs::directory_iterator i{dir, ec};
  for (fs::directory_iterator end; !ec && i != end; i.increment(ec)) {
    auto& path = i->path();
    if (path.extension() == ".jsonl")
      out.input.history.emplace(
        path.filename().string(),
        read_file(path, "is a link to nothing", out.errors));
  }
  if (ec)
    out.errors.push_back(unreadable(dir, ec.value()));
}

} // namespace

run_dir_contents read_run_dir(const fs::path& dir) {
  run_dir_contents out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    out.errors.push_back(fmt::format("{} is not a directory", words(dir)));
    return out;
  }
  auto missing = fmt::format(
    "is missing (a run writes it; is {} a run directory?)", words(dir));
  auto& in = out.input;
  read_history(dir / "history", missing, out);
  auto file = [&](std::string_view name) {
    return read_file(dir / name, missing, out.errors);
  };
  in.nemesis_jsonl = file(file_names::nemesis);
  in.client_log = file(file_names::client);
  in.ledger_jsonl = file(file_names::ledger);
  in.journal_jsonl = file(file_names::journal);
  in.views_jsonl = file(file_names::views);
  return out;
}

} // namespace troupe::chaos
