// libcurl, which the LLM client (a later stage) talks through; for now its version.
#include <curl/curl.h>

#include <string>

namespace ttap {

std::string curl_version_string() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  std::string s = info && info->version ? info->version : "unknown";
  if (info && info->ssl_version) s += std::string(" (") + info->ssl_version + ")";
  return s;
}

}  // namespace ttap
