// The HTML report rendered by headless Chromium: the screenshot must show the timeline
// plot where the report's data says (flagged windows' score bars red, GPU busy bars green
// under busy windows, nothing over idle or zero-score windows). The interactive timeline
// has its own test (html_timeline_test.cpp). Skipped, with a message,
// when Chromium is not installed.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include <filesystem>

#include "suite_support.hpp"

namespace {

using ttap::suite::data_path;
using ttap::suite::ProcResult;
using ttap::suite::read_file;
using ttap::suite::run_process;
using ttap::suite::run_ttap;
using ttap::suite::scratch;

// A minimal PNG reader for what Chromium writes: 8-bit RGB or RGBA, not interlaced.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
  uint32_t at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
    return (uint32_t(rgb[i]) << 16) | (uint32_t(rgb[i + 1]) << 8) | rgb[i + 2];
  }
};

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) | uint8_t(s[at + 3]);
}

std::optional<Image> decode_png(const std::string& png) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return std::nullopt;
  Image img;
  int channels = 0;
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + len > png.size()) return std::nullopt;
    if (type == "IHDR") {
      img.width = static_cast<int>(be32(png, at + 8));
      img.height = static_cast<int>(be32(png, at + 12));
      const int depth = uint8_t(png[at + 16]), color = uint8_t(png[at + 17]), interlace = uint8_t(png[at + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return std::nullopt;
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  if (channels == 0) return std::nullopt;
  const size_t stride = static_cast<size_t>(img.width) * static_cast<size_t>(channels);
  std::vector<uint8_t> raw((stride + 1) * static_cast<size_t>(img.height));
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK || raw_len != raw.size())
    return std::nullopt;
  std::vector<uint8_t> cur(stride), prev(stride, 0);
  img.rgb.resize(static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* line = raw.data() + static_cast<size_t>(y) * (stride + 1);
    const uint8_t filter = line[0];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(channels) ? cur[i - static_cast<size_t>(channels)] : 0, b = prev[i],
                c = i >= static_cast<size_t>(channels) ? prev[i - static_cast<size_t>(channels)] : 0;
      int pred = 0;
      switch (filter) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: return std::nullopt;
      }
      cur[i] = static_cast<uint8_t>(line[1 + i] + pred);
    }
    for (int x = 0; x < img.width; ++x)
      for (int k = 0; k < 3; ++k)
        img.rgb[(static_cast<size_t>(y) * static_cast<size_t>(img.width) + static_cast<size_t>(x)) * 3 + static_cast<size_t>(k)] =
            cur[static_cast<size_t>(x) * static_cast<size_t>(channels) + static_cast<size_t>(k)];
    std::swap(cur, prev);
  }
  return img;
}

// The plot's colors, as src/report/analyze_html.cpp draws them.
constexpr uint32_t kBackground = 0xf4f1e4, kScore = 0x4c78a8, kFlagged = 0xd62728, kBusy = 0x2ca02c;

bool column_has(const Image& img, int x, int y0, int y1, uint32_t color) {
  for (int y = y0; y < y1; ++y)
    if (img.at(x, y) == color) return true;
  return false;
}

TEST(AnalyzeHtml, ChromiumShowsTheTimelineWhereTheDataSays) {
  const std::string chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) GTEST_SKIP() << "chromium is not installed: the HTML screenshot check is skipped";
  const std::string trace = data_path("kineto_resnet50_v100_nw0.json.gz");
  const std::string html = scratch() + "/report.html", png = scratch() + "/report.png";
  const ProcResult r = run_ttap({"analyze", "--scorer", "rules", "--fail-on", "warning", "--format", "html", "-o", html, trace});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string page = read_file(html);
  // Self-contained: nothing a browser would fetch (inline SVG needs no namespace URL).
  for (const char* fetch : {"http://", "https://", "src=", "href=", "url(", "@import"})
    EXPECT_EQ(page.find(fetch), std::string::npos) << fetch;
  // One script, inline (the timeline's); the lanes ride along as JSON, not as code.
  size_t scripts = 0;
  for (size_t at = page.find("<script>"); at != std::string::npos; at = page.find("<script>", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 1u);
  const ProcResult json = run_ttap({"analyze", "--scorer", "rules", "--format", "json", trace});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS);
  auto windows = doc["traces"].at(0)["windows"].get_array();
  ASSERT_EQ(windows.size(), 100u);

  const ProcResult shot = run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1",
                                       "--hide-scrollbars", "--window-size=1100,1600", "--screenshot=" + png, "file://" + html});
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const auto img = decode_png(read_file(png));
  ASSERT_TRUE(img.has_value()) << "Chromium's PNG could not be decoded";
  // The plot background's bounding box: both panels (window score on top, GPU busy below).
  int left = img->width, right = -1, top = img->height, bottom = -1;
  for (int y = 0; y < img->height; ++y)
    for (int x = 0; x < img->width; ++x)
      if (img->at(x, y) == kBackground) {
        left = std::min(left, x), right = std::max(right, x), top = std::min(top, y), bottom = std::max(bottom, y);
      }
  ASSERT_GE(right, 0) << "no plot in the screenshot";
  const int width = right - left + 1, height = bottom - top + 1;
  EXPECT_EQ(width, 960);
  EXPECT_EQ(height, 264) << "two 120 px panels and a 24 px gap";
  const int score_y0 = top, score_y1 = top + 120, busy_y0 = top + 144, busy_y1 = top + 264;
  int flagged = 0, checked_busy = 0, checked_idle = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    auto w = windows.at(i);
    const int x = left + static_cast<int>((static_cast<double>(i) + 0.5) * width / 100.0);
    const double score = double(w["score"]), busy = double(w["gpu_busy"]);
    if (bool(w["flagged"])) {
      ++flagged;
      EXPECT_TRUE(column_has(*img, x, score_y0, score_y1, kFlagged)) << "window " << i;
    } else if (score > 0.05) {
      EXPECT_TRUE(column_has(*img, x, score_y0, score_y1, kScore)) << "window " << i;
    } else if (score == 0) {
      EXPECT_FALSE(column_has(*img, x, score_y0, score_y1, kScore) || column_has(*img, x, score_y0, score_y1, kFlagged)) << "window " << i;
    }
    if (busy > 0.05) {
      ++checked_busy;
      EXPECT_TRUE(column_has(*img, x, busy_y0, busy_y1, kBusy)) << "window " << i;
    } else if (busy == 0) {
      ++checked_idle;
      EXPECT_FALSE(column_has(*img, x, busy_y0, busy_y1, kBusy)) << "window " << i;
    }
  }
  EXPECT_GT(flagged, 0);
  EXPECT_GT(checked_busy, 10);
  EXPECT_GT(checked_idle, 0) << "resnet nw0 has windows where the GPU waits for the DataLoader";
}

}  // namespace
