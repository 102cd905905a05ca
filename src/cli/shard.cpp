// `--shard K/N`: the same split of the same traces on every machine of a cluster.
#include <algorithm>
#include <charconv>

#include "commands.hpp"

namespace ttap::cli {

std::optional<Shard> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  Shard s;
  auto whole = [](std::string_view part, size_t& v) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (!whole(text.substr(0, slash), s.index) || !whole(text.substr(slash + 1), s.count)) return std::nullopt;
  if (s.count < 1 || s.index < 1 || s.index > s.count) return std::nullopt;
  return s;
}

std::vector<std::string> shard_of(std::vector<std::string> traces, const Shard& shard) {
  std::sort(traces.begin(), traces.end());
  std::vector<std::string> mine;
  for (size_t i = shard.index - 1; i < traces.size(); i += shard.count) mine.push_back(std::move(traces[i]));
  return mine;
}

}  // namespace ttap::cli
