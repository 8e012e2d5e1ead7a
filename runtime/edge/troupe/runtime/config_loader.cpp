#include "troupe/runtime/config_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <toml.hpp>

#include "troupe/runtime/errc.hpp"

extern char** environ;

namespace troupe::runtime {

namespace {

constexpr std::string_view env_prefix = "TROUPE_";
constexpr std::string_view config_env = "TROUPE_CONFIG";
constexpr std::string_view config_flag = "--config=";

using toml_value = toml::value;

// One key of the file: its raw value or why it has none.
struct file_entry {
  std::string key;
  const toml_value* value = nullptr; // for the line number of an error
  std::optional<raw_config_value> raw;
  std::string shown;  // the value as text, for errors
  std::string reason; // when raw is empty
};

// Bounds that keep a hostile or broken file from exhausting the stack
// (toml11 parses nested arrays and inline tables recursively) or time.
constexpr size_t max_file_bytes = 1024 * 1024;
constexpr int max_nesting = 32;
constexpr size_t max_listed_errors = 50;

// The deepest nesting of [ ] and { } in TOML text outside strings and
// comments ("[a.b]" headers count 1). Approximate but conservative.
int nesting_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '"' || c == '\'') {
      bool multi = text.substr(i, 3) == std::string(3, c);
      auto close = multi ? std::string(3, c) : std::string(1, c);
      i += close.size();
      while (i < text.size() && text.substr(i, close.size()) != close) {
        if (c == '"' && text[i] == '\\')
          ++i;
        else if (!multi && text[i] == '\n')
          break;
        ++i;
      }
      i += close.size() - 1;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string show_toml(const toml_value& v) {
  switch (v.type()) {
    case toml::value_t::string:
      return fmt::format("{:?}", v.as_string().str);
    case toml::value_t::array: {
      std::vector<std::string> items;
      for (const auto& item : v.as_array())
        items.push_back(show_toml(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case toml::value_t::table:
      return "{...}";
    default: {
      std::ostringstream out;
      out << v;
      auto text = out.str();
      while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
      return text;
    }
  }
}

file_entry entry_of(std::string key, const toml_value& v) {
  file_entry result{std::move(key), &v, std::nullopt, show_toml(v), {}};
  switch (v.type()) {
    case toml::value_t::string:
      result.raw = v.as_string().str;
      break;
    case toml::value_t::integer:
      result.raw = static_cast<int64_t>(v.as_integer());
      break;
    case toml::value_t::boolean:
      result.raw = v.as_boolean();
      break;
    case toml::value_t::floating:
      result.raw = static_cast<double>(v.as_floating());
      break;
    case toml::value_t::array: {
      std::vector<std::string> items;
      for (const auto& item : v.as_array()) {
        if (!item.is_string()) {
          result.reason = "TOML arrays must hold only strings";
          return result;
        }
        items.push_back(item.as_string().str);
      }
      result.raw = std::move(items);
      break;
    }
    default:
      result.reason = "TOML dates and times are not supported (use a string)";
  }
  return result;
}

void flatten(const toml_value& table, const std::string& prefix,
             std::vector<file_entry>& out) {
  for (const auto& [name, v] : table.as_table()) {
    auto key = prefix.empty() ? name : prefix + "." + name;
    if (v.is_table())
      flatten(v, key, out);
    else
      out.push_back(entry_of(std::move(key), v));
  }
}

error file_error(const std::string& path, std::string_view why) {
  return make_error(errc::bad_config_file,
                    fmt::format("bad config file \"{}\": {}", path, why));
}

// toml11's message is "[error] toml::parse_x: what\n --> file\n | ...".
std::string summarize(const toml::exception& ex) {
  std::string_view what = ex.what();
  what = what.substr(0, what.find('\n'));
  if (what.starts_with("[error] "))
    what.remove_prefix(8);
  std::string_view line_text = ex.location().line_str();
  return fmt::format("line {}: {} (at {:?})", ex.location().line(), what,
                     line_text);
}

void load_file(config& cfg, const std::string& path,
               std::vector<error>& errors) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    errors.push_back(file_error(path, "no such file"));
    return;
  }
  if (std::filesystem::is_directory(status)) {
    errors.push_back(file_error(path, "is a directory"));
    return;
  }
  if (std::filesystem::is_regular_file(status)
      && std::filesystem::file_size(path, ec) > max_file_bytes) {
    errors.push_back(file_error(
      path, fmt::format("larger than {} bytes; is it the right file?",
                        max_file_bytes)));
    return;
  }
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    errors.push_back(file_error(
      path, fmt::format("cannot open it: {}", std::strerror(errno))));
    return;
  }
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  if (text.size() > max_file_bytes) { // a pipe or a device
    errors.push_back(file_error(
      path, fmt::format("larger than {} bytes; is it the right file?",
                        max_file_bytes)));
    return;
  }
  if (auto depth = nesting_depth(text); depth > max_nesting) {
    errors.push_back(file_error(
      path, fmt::format("arrays or tables nested {} deep (at most {})", depth,
                        max_nesting)));
    return;
  }
  std::vector<file_entry> entries;
  toml_value root;
  try {
    std::istringstream stream{text};
    root = toml::parse(stream, path);
    flatten(root, "", entries);
  } catch (const toml::exception& ex) {
    errors.push_back(file_error(path, summarize(ex)));
    return;
  } catch (const std::exception& ex) {
    errors.push_back(file_error(path, ex.what()));
    return;
  }
  config_origin origin{fmt::format("file {}", path)};
  std::vector<std::pair<const file_entry*, error>> problems;
  for (auto& e : entries) {
    const auto* key = cfg.schema().find(e.key);
    if (key == nullptr)
      problems.emplace_back(&e, unknown_key_error(cfg.schema(), e.key, origin));
    else if (!e.raw)
      problems.emplace_back(&e,
                            bad_value_error(*key, e.shown, origin, e.reason));
    else if (auto err = cfg.set(e.key, *e.raw, origin))
      problems.emplace_back(&e, std::move(err));
  }
  // toml11 keeps tables unordered: report problems in the file's order.
  // Line numbers cost a scan of the file each, so only problems get one.
  if (problems.size() <= max_listed_errors) {
    std::vector<std::pair<uint32_t, error>> ordered;
    for (auto& [e, err] : problems)
      ordered.emplace_back(e->value->location().line(), std::move(err));
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](auto& x, auto& y) { return x.first < y.first; });
    for (auto& [line, err] : ordered)
      errors.push_back(std::move(err));
  } else {
    for (auto& [e, err] : problems)
      errors.push_back(std::move(err));
  }
}

std::string key_of_env(std::string_view name) {
  std::string result;
  name.remove_prefix(env_prefix.size());
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '_' && i + 1 < name.size() && name[i + 1] == '_') {
      result += '.';
      ++i;
    } else if (name[i] >= 'A' && name[i] <= 'Z') {
      result += static_cast<char>(name[i] - 'A' + 'a');
    } else {
      result += name[i];
    }
  }
  return result;
}

// The argument as an error may show it: a secret's value is redacted.
std::string shown_arg(const config_schema& schema, std::string_view arg) {
  auto eq = arg.find('=');
  if (eq == std::string_view::npos)
    return std::string{arg};
  auto key = arg.substr(0, eq);
  while (key.starts_with('-'))
    key.remove_prefix(1);
  if (auto* decl = schema.find(key);
      decl != nullptr && decl->type == config_type::secret)
    return fmt::format("{}=<redacted>", arg.substr(0, eq));
  return std::string{arg};
}

void apply_arg(config& cfg, std::string_view arg, std::vector<error>& errors) {
  auto eq = arg.find('=');
  if (!arg.starts_with("--") || eq == std::string_view::npos || eq == 2) {
    errors.push_back(make_error(
      errc::bad_command_line,
      fmt::format("bad command-line argument {:?}: expected --key=value",
                  shown_arg(cfg.schema(), arg))));
    return;
  }
  if (arg.starts_with(config_flag)) {
    if (arg.size() == config_flag.size())
      errors.push_back(make_error(
        errc::bad_command_line,
        "bad command-line argument \"--config=\": expected --config=PATH"));
    return;
  }
  auto key = arg.substr(2, eq - 2);
  config_origin origin{fmt::format("flag --{}", key)};
  if (auto err = cfg.set(key, arg.substr(eq + 1), std::move(origin)))
    errors.push_back(std::move(err));
}

error combine(std::vector<error> errors) {
  if (errors.size() == 1)
    return std::move(errors.front());
  auto msg = fmt::format("{} configuration errors:", errors.size());
  for (size_t i = 0; i < errors.size() && i < max_listed_errors; ++i)
    msg += fmt::format("\n  {}", errors[i].message);
  if (errors.size() > max_listed_errors)
    msg
      += fmt::format("\n  ... and {} more", errors.size() - max_listed_errors);
  return error{errors.front().category, errors.front().code, std::move(msg)};
}

} // namespace

expected<config> load_config(const config_schema& schema,
                             const config_sources& sources) {
  config cfg{schema};
  std::vector<error> errors;
  auto file = sources.file;
  for (const auto& [name, value] : sources.env)
    if (name == config_env && !value.empty())
      file = value;
  for (const auto& arg : sources.args)
    if (std::string_view{arg}.starts_with(config_flag))
      file = arg.substr(config_flag.size());
  if (file && !file->empty())
    load_file(cfg, *file, errors);
  for (const auto& [name, value] : sources.env) {
    if (!std::string_view{name}.starts_with(env_prefix) || name == config_env)
      continue;
    config_origin origin{fmt::format("env {}", name)};
    if (auto err = cfg.set(key_of_env(name), value, std::move(origin)))
      errors.push_back(std::move(err));
  }
  for (const auto& arg : sources.args)
    apply_arg(cfg, arg, errors);
  if (!errors.empty())
    return combine(std::move(errors));
  return cfg;
}

config_sources make_config_sources(
  const std::vector<std::string>& args,
  const std::vector<std::pair<std::string, std::string>>& env) {
  config_sources result;
  for (const auto& [name, value] : env) {
    if (!std::string_view{name}.starts_with(env_prefix))
      continue;
    if (name == config_env && !value.empty())
      result.file = value;
    result.env.emplace_back(name, value);
  }
  for (const auto& arg : args) {
    if (arg == "--")
      break;
    // Every other argument must be --key=value: load_config reports the
    // rest (a stray "lease.ttl=5x" is a mistake, never silently ignored).
    if (std::string_view{arg}.starts_with(config_flag)
        && arg.size() > config_flag.size())
      result.file = arg.substr(config_flag.size());
    result.args.push_back(arg);
  }
  return result;
}

config_sources sources_from_process(const std::vector<std::string>& args,
                                    char** envp) {
  std::vector<std::pair<std::string, std::string>> env;
  for (auto** p = envp != nullptr ? envp : environ; p != nullptr && *p; ++p) {
    std::string_view entry{*p};
    auto eq = entry.find('=');
    if (eq == std::string_view::npos)
      continue;
    env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return make_config_sources(args, env);
}

config_sources sources_from_process(int argc, char** argv, char** envp) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  return sources_from_process(args, envp);
}

} // namespace troupe::runtime
