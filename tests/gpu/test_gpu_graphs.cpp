// CUDA graph capture (NOTE [ graph capture ], include/kernc/runtime.hpp): kernc calls
// captured from a stream and replayed on fresh random data each time, against host
// references; and the errors of what cannot be captured.

#include <cmath>
#include <string>
#include <vector>

#include "gpu_helpers.hpp"
#include "kernc/call.hpp"

namespace kernc::gpu_test {

TEST_CASE("a graph captured from a kept plan, a plain call and a split reduction replays them on new data") {
  KERNC_GPU_ONLY("CUDA graphs: the host backend cannot capture or launch graphs");
  KERNC_GPU_RANDOM(random, "graph capture");
  const ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "gpu_graph_saxpy");
  const ElementwiseKernel square("T z", "T w", "w = z * z", "gpu_graph_square");
  const ReductionKernel sum("T w", "T s", "w", "a + b", "s = a", "0", "gpu_graph_sum");
  const std::int64_t rows = 19, cols = 70'001, n = rows * cols;
  Device gpu = device();
  Stream stream = gpu.create_stream();
  CallOptions on_stream;
  on_stream.stream = stream;
  auto x = DeviceArray::empty(gpu, DType::float32, {rows, cols});
  auto y = DeviceArray::empty(gpu, DType::float32, {rows, cols});
  auto z = DeviceArray::empty(gpu, DType::float32, {rows, cols});
  auto w = DeviceArray::empty(gpu, DType::float32, {rows, cols});
  auto s = DeviceArray::empty(gpu, DType::float32, {rows});
  CallOptions plan_options;
  plan_options.multiprocessors = gpu.multiprocessors();
  const Call plan = saxpy.plan({2.5f, x.ref(), y.ref()}, {z.ref()}, plan_options);
  CallOptions by_row = plan_options;
  by_row.axes = std::vector<int>{1};
  const Call reduction = sum.plan({w.ref()}, {s.ref()}, by_row);
  CHECK(reduction.splits() > 1);  // its partials are stream-ordered scratch: graph memory nodes

  // Once outside the capture: loads the three kernels.
  auto launch_all = [&] {
    plan.launch({2.5f, x.ref(), y.ref()}, {z.ref()}, stream);
    square({z.ref()}, {w.ref()}, on_stream);
    reduction.launch({w.ref()}, {s.ref()}, stream);
  };
  launch_all();
  stream.synchronize();

  gpu.begin_capture(stream);
  launch_all();
  Graph graph = gpu.end_capture(stream);
  REQUIRE(static_cast<bool>(graph));

  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const auto hx = random.uniform<float>(n), hy = random.uniform<float>(n);
    gpu.copy_to_device(x.ref().data, hx.data(), n * sizeof(float));
    gpu.copy_to_device(y.ref().data, hy.data(), n * sizeof(float));
    gpu.fill_bytes(z.ref().data, 0xff, n * sizeof(float));
    gpu.fill_bytes(s.ref().data, 0xff, rows * sizeof(float));
    gpu.synchronize();
    graph.launch(stream);
    stream.synchronize();
    std::vector<float> want_z(n);
    std::vector<double> want_s(rows, 0.0), scale(rows, 0.0);
    for (std::int64_t k = 0; k < n; ++k) {
      want_z[k] = std::fma(2.5f, hx[k], hy[k]);  // NVRTC contracts a * x + y
      const float sq = want_z[k] * want_z[k];
      want_s[k / cols] += sq;
      scale[k / cols] += std::fabs(sq);
    }
    expect_equal(download<float>(z), want_z, "z = 2.5 x + y from the graph");
    expect_close(as_doubles(download<float>(s)), want_s, 1e-5, "row sums of z * z from the graph", scale);
  }
}

TEST_CASE("graph capture refuses the default stream and reports a call that cannot be captured") {
  Device gpu = device();
  if (host_mode()) {
    // What the host does instead: a clear error naming the backend, at the start of a capture.
    Stream stream = gpu.create_stream();
    KERNC_CHECK_ERROR(ErrorCode::driver, "cpu GPUs: this kernc runtime backend cannot capture or launch graphs",
                      gpu.begin_capture(stream));
  }
  KERNC_GPU_ONLY("CUDA graphs: the host backend cannot capture or launch graphs (checked above: a clear error)");
  const ElementwiseKernel twice("T x", "T y", "y = x * 2", "gpu_graph_twice");
  auto error = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string on_default = error([&] { gpu.begin_capture(StreamRef{}); });
  CHECK_MESSAGE(contains(on_default, "legacy default stream"), on_default);

  Stream stream = gpu.create_stream();
  CallOptions on_stream;
  on_stream.stream = stream;
  auto x = upload(DType::float64, {1000}, std::vector<double>(1000, 1.25));
  twice({x.ref()}, {}, on_stream);  // loads the kernel
  stream.synchronize();
  gpu.begin_capture(stream);
  // No output passed: allocating one (cuMemAlloc) is not capturable.
  const std::string in_capture = error([&] { twice({x.ref()}, {}, on_stream); });
  CHECK_MESSAGE(in_capture != "no error", in_capture);
  const std::string at_end = error([&] { gpu.end_capture(stream); });
  CHECK_MESSAGE(contains(at_end, "could not be captured"), at_end);
  // The stream is no longer capturing: a call runs again.
  auto y = twice({x.ref()}, {}, on_stream);
  stream.synchronize();
  expect_equal(download<double>(y[0]), std::vector<double>(1000, 2.5), "a call after the failed capture");
  const std::string empty = error([] { Graph().launch(); });
  CHECK_MESSAGE(contains(empty, "empty"), empty);
}

}  // namespace kernc::gpu_test
