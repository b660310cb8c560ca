// The README's main job: load the trained digits classifier from ONE shared library
// (testdata/models/digits.so, packed by the build with `sorun pack`), show what goes in and what
// comes out for a few held-out images, and measure accuracy on all 360 held-out images.
//
// Usage: digits_demo [--model PATH] [--show N]   (bazel run //tools/demo:digits)
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "tools/npy.h"

namespace {

std::string Runfile(const char* argv0, const std::string& rel) {
  if (const char* dir = std::getenv("RUNFILES_DIR")) return std::string(dir) + "/sorun/" + rel;
  return std::string(argv0) + ".runfiles/sorun/" + rel;
}

// "[1, 64]".
std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int Fail(const sorun::Status& s) {
  std::fprintf(stderr, "digits_demo: error: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path = Runfile(argv[0], "testdata/models/digits.so");
  std::string data_dir = Runfile(argv[0], "testdata/models/digits");
  int show = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) {
      model_path = argv[++i];
    } else if (a == "--show" && i + 1 < argc) {
      show = std::max(0, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: digits_demo [--model PATH] [--show N]\n");
      return 2;
    }
  }

  struct stat st;
  if (::stat(model_path.c_str(), &st) != 0) {
    std::fprintf(stderr, "digits_demo: error: %s: no such file\n", model_path.c_str());
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto model = sorun::Model::Load(model_path);
  if (!model.ok()) return Fail(model.status());
  auto exec = model->NewExecutor();  // on the CPU
  if (!exec.ok()) return Fail(exec.status());
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  auto x = sorun::ReadNpyFile(data_dir + "/digits_test_x.npy");
  auto y = sorun::ReadNpyFile(data_dir + "/digits_test_y.npy");
  if (!x.ok()) return Fail(x.status());
  if (!y.ok()) return Fail(y.status());
  const int64_t n = x->shape()[0];

  std::printf("sorun demo: handwritten digits classifier (8x8 images, 64 -> 32 -> 10)\n");
  std::string shown = model_path;
  size_t runfiles = shown.find(".runfiles/sorun/");
  if (runfiles != std::string::npos) shown = shown.substr(runfiles + std::string(".runfiles/sorun/").size());
  std::printf("model: %s (%.1f KiB, one file: graph + weights + kernels), loaded and ready in %.2f ms\n", shown.c_str(),
              static_cast<double>(st.st_size) / 1024.0, load_ms);
  const sorun::TensorInfo* first = &model->inputs()[0];
  for (const sorun::TensorInfo& t : model->inputs()) {
    if (!t.is_param) {  // the image; the other inputs are the weights
      first = &t;
      break;
    }
  }
  const sorun::TensorInfo& input = *first;
  const sorun::TensorInfo& output = model->outputs()[0];
  std::printf("input  '%s' %s%s   output '%s' %s%s\n\n", input.name.c_str(), sorun::DataTypeName(input.dtype).c_str(),
              ShapeText(input.shape).c_str(), output.name.c_str(), sorun::DataTypeName(output.dtype).c_str(),
              ShapeText(output.shape).c_str());

  auto sample = sorun::NDArray::Empty({1, 64}, input.dtype);
  if (!sample.ok()) return Fail(sample.status());
  int correct = 0;
  double run_ms = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(sample->data(), x->data_as<float>() + i * 64, 64 * sizeof(float));
    sorun::Status s = exec->SetInput(input.name, sample->dl());
    if (!s.ok()) return Fail(s);
    auto r0 = std::chrono::steady_clock::now();
    s = exec->Run();
    run_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r0).count();
    if (!s.ok()) return Fail(s);
    auto probabilities = exec->GetOutput(0);  // the executor's own output array (no copy)
    if (!probabilities.ok()) return Fail(probabilities.status());
    const float* p = probabilities->data_as<float>();
    int best = static_cast<int>(std::max_element(p, p + 10) - p);
    int truth = static_cast<int>(y->data_as<int64_t>()[i]);
    correct += best == truth;
    if (i < show) {
      std::printf("held-out image %lld (what went in):\n", static_cast<long long>(i));
      const char* shades = " .:-=+*#%@";
      for (int r = 0; r < 8; ++r) {
        std::printf("    ");
        for (int c = 0; c < 8; ++c) {
          float v = sample->data_as<float>()[r * 8 + c];
          int k = std::min(9, std::max(0, static_cast<int>(v * 9.0f + 0.5f)));
          std::printf("%c%c", shades[k], shades[k]);
        }
        std::printf("\n");
      }
      int order[10];
      for (int k = 0; k < 10; ++k) order[k] = k;
      std::sort(order, order + 10, [&](int a, int b) { return p[a] > p[b]; });
      std::printf("  what came out: predicted %d (p = %.3f), true label %d %s; next: %d (%.3f), %d (%.3f)\n\n", best,
                  p[best], truth, best == truth ? "[correct]" : "[WRONG]", order[1], p[order[1]], order[2],
                  p[order[2]]);
    }
  }
  std::printf("accuracy on %lld held-out digits: %d/%lld = %.2f%% (mean run %.1f us)\n", static_cast<long long>(n),
              correct, static_cast<long long>(n), 100.0 * correct / static_cast<double>(n),
              1000.0 * run_ms / static_cast<double>(n));
  return 0;
}
