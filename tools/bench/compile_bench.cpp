// kernc_compile_bench: what NVRTC compiles cost, on any machine with the CUDA toolkit (no
// GPU, no driver needed). Issue 35, item 1. For every program a spec file needs (default
// examples/kernels.json: every kernel kind and layout class it reaches) it compiles the
// program once for a target (default sm_90) through kernc's own compiler (the flags kernc
// passes, no cache of kernc's) and prints its wall and CPU time, the median overall and by
// kind and layout class; then it splits the median program's compile into NVRTC's phases
// with --fdevice-time-trace (front end: NVRTC's built-in header, kernc's headers, toolkit
// headers, template instantiation, the rest; NVVM link, optimizer, code generation; ptxas).
//
// The driver's compute cache is off unless --driver-cache is given: CUDA_CACHE_DISABLE=1 is
// set before NVRTC is loaded, and kernc passes -no-cache (NOTE [ the driver's compute cache ]
// in src/compiler/nvrtc_compiler.cpp). With --driver-cache, a program the driver's cache
// served is listed as such and left out of every time: it was not compiled.
//
// With --cold-start N it measures instead a fresh process's first compile of a one-line raw
// kernel (issue 35, item 5), best of N child processes each, the kinds taking turns, beside
// its floor:
//   bare     a process that dlopens libnvrtc, creates, compiles and gets the cubin;
//   library  a process that compiles the same source through kernc (load_compiler, Cache
//            in memory only: Config, the toolkit include scan, key and compile);
//   cli      `KERNCCLI --no-cache compile` of the same source (with --kernc KERNCCLI).
// Wall time from fork to exit, and the child's CPU time (wait4).
//
// With --parallel-floor "1 16" it then compiles the same programs again in 1, then 16, ...
// forked processes sharing one queue, the longest first (tools/bench/parallel_floor.hpp):
// how these compiles scale on this machine with nothing of kernc's in between, the floor
// for `kernc precompile -j N` (tools/bench/precompile-scaling --floor). Best of --repeat.
//
// Usage: kernc_compile_bench [--spec FILE] [--target sm_90] [--repeat R] [--driver-cache]
//                            [--flag F]... [--no-phases] [--only TEXT] [--dump DIR]
//                            [--parallel-floor "J..."]
//        kernc_compile_bench --cold-start N [--kernc KERNCCLI] [--target sm_90]
//   --repeat R   compile each program R times and report the median of each (default 1)
//   --flag F     an extra NVRTC flag for every compile (e.g. -minimal), to try options
//   --only TEXT  only the programs whose "kernel variant" line contains TEXT
//   --dump DIR   write each program's source (.cu) and binary (.cubin) to DIR, to read the
//                generated code and its SASS (cuobjdump --dump-sass, no GPU needed)
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "kernc/spec_file.hpp"
#include "median.hpp"
#include "parallel_floor.hpp"

using namespace kernc;

namespace {

double cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

struct Row {
  std::string kind, kernel, description, layout;
  double wall_ms = 0, cpu_ms = 0;
  bool driver_cache = false;
  const Program* program = nullptr;
};

// The layout class of a variant's description ("float32 -> float32 contiguous-i32"): its
// last word; a raw kernel or module has none.
std::string layout_of(const std::string& kind, const std::string& description) {
  if (kind == "raw" || kind == "raw_module") return "-";
  const auto space = description.rfind(' ');
  return space == std::string::npos ? description : description.substr(space + 1);
}

// Milliseconds of exclusive time per phase, from a --fdevice-time-trace file (Chrome trace
// events, microseconds). Header events nest (a header that includes another): each gets its
// own time less its children's, so nothing is counted twice.
std::map<std::string, double> phases_from_trace(const nlohmann::json& trace, const std::string& program_name,
                                                double front_end_from_log) {
  std::map<std::string, double> ms;
  struct Header {
    double start, end;
    std::string what;
  };
  std::vector<Header> headers;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.value("ph", "") != "X") continue;
    const std::string name = event.value("name", "");
    const double dur = event.value("dur", 0.0), ts = event.value("ts", 0.0);
    if (name == "Processing Header File") {
      const std::string detail = event.contains("args") ? event["args"].value("detail", "") : "";
      std::string what = detail.rfind("kernc/", 0) == 0                     ? "front end: kernc's headers"
                         : detail.find("nvrtc_builtin") != std::string::npos ? "front end: NVRTC's built-in header"
                         : detail.rfind(program_name.substr(0, program_name.size() - 3), 0) == 0
                             ? "front end: the program's own code (its #line pieces)"
                             : "front end: toolkit and other headers";
      headers.push_back({ts, ts + dur, what});
    } else if (name == "CUDA C++ Front-End") {
      ms["front end (total)"] += dur / 1e3;
    } else if (name == "Generating Needed Template Instantiations") {
      ms["front end: template instantiation"] += dur / 1e3;
    } else if (name == "NVVM Module Linker") {
      ms["NVVM: module linker (libdevice)"] += dur / 1e3;
    } else if (name == "NVVM Optimizer") {
      ms["NVVM: optimizer"] += dur / 1e3;
    } else if (name == "NVVM CodeGen") {
      ms["NVVM: code generation (PTX)"] += dur / 1e3;
    } else if (name == "Total PTXAS Time") {
      ms["ptxas (PTX to SASS)"] += dur / 1e3;
    }
  }
  std::sort(headers.begin(), headers.end(), [](const Header& a, const Header& b) { return a.start < b.start; });
  std::vector<double> self(headers.size());
  std::vector<size_t> open;
  for (size_t k = 0; k < headers.size(); ++k) {
    while (!open.empty() && headers[open.back()].end <= headers[k].start) open.pop_back();
    self[k] = headers[k].end - headers[k].start;
    if (!open.empty()) self[open.back()] -= self[k] < 0 ? 0 : headers[k].end - headers[k].start;
    open.push_back(k);
  }
  double header_total = 0;
  for (size_t k = 0; k < headers.size(); ++k) {
    ms[headers[k].what] += self[k] / 1e3;
    header_total += self[k] / 1e3;
  }
  // NVRTC 13.0's trace has the "CUDA C++ Front-End" event for some programs only; its
  // --time=- line always has the front end.
  if (!ms.count("front end (total)") && front_end_from_log > 0) ms["front end (total)"] = front_end_from_log;
  if (ms.count("front end (total)")) {
    ms["front end: the rest (the program's parse, IR generation)"] =
        ms["front end (total)"] - header_total - ms["front end: template instantiation"];
  }
  return ms;
}

void print_phases(const Compiler& compiler, const Row& row, const char* which, const Target& target,
                  const std::vector<std::string>& extra_flags) {
  const std::string base = fmt::format("/tmp/kernc-compile-bench-{}", ::getpid());
  Program program = *row.program;
  program.options.raw_flags.insert(program.options.raw_flags.end(), extra_flags.begin(), extra_flags.end());
  program.options.raw_flags.push_back("--fdevice-time-trace=" + base);
  program.options.raw_flags.push_back("--time=-");
  std::remove((base + ".json").c_str());
  std::remove(base.c_str());
  const double cpu0 = cpu_ms();
  const CompiledProgram compiled = compiler.compile(program, target);
  const double cpu = cpu_ms() - cpu0;
  std::ifstream in(base + ".json");
  if (!in) in.open(base);  // NVRTC 13.0 appends ".json" to the name it is given
  if (!in) {
    fmt::print("phase split: NVRTC wrote no trace file ({}.json); its log:\n{}\n", base, compiled.log);
    return;
  }
  const auto trace = nlohmann::json::parse(in);
  std::remove((base + ".json").c_str());
  std::remove(base.c_str());
  fmt::print("\nphase split of {} {} ({}), one compile: {:.1f} ms wall, {:.1f} ms CPU\n", row.kernel,
             row.description, which, compiled.compile_ms, cpu);
  double front_end_from_log = 0;
  {
    std::istringstream log(compiled.log);
    for (std::string line; std::getline(log, line);) {
      const auto at = line.find(", CUDA C++ Frontend, ");
      if (at != std::string::npos) front_end_from_log = std::atof(line.c_str() + at + 21);
    }
  }
  fmt::print("{:<62} {:>10} {:>7}\n", "phase (NVRTC --fdevice-time-trace, exclusive)", "wall ms", "share");
  const auto ms = phases_from_trace(trace, program.name, front_end_from_log);
  double total = 0;
  for (const char* top : {"front end (total)", "NVVM: module linker (libdevice)", "NVVM: optimizer",
                          "NVVM: code generation (PTX)", "ptxas (PTX to SASS)"}) {
    if (ms.count(top)) total += ms.at(top);
  }
  for (const auto& [name, value] : ms) {
    fmt::print("{:<62} {:>10.1f} {:>6.0f}%\n", name, value, total > 0 ? 100 * value / total : 0);
  }
  fmt::print("(shares of the five top phases' sum, {:.1f} ms; the phases are wall time of a one-threaded compile, so on a "
             "loaded machine they exceed its CPU time)\n",
             total);
  fmt::print("NVRTC --time=- (its own three phases):\n");
  std::istringstream log(compiled.log);
  for (std::string line; std::getline(log, line);) {
    if (line.find(", ms") != std::string::npos || line.rfind("File name", 0) == 0) fmt::print("  {}\n", line);
  }
}

// --dump: the program's source and binary, named by its place in the table, kernel and layout.
void dump(const std::string& dir, size_t index, const Row& row, const std::string& source, const std::string& binary) {
  const std::string base = fmt::format("{}/{:03}-{}-{}", dir, index, row.kernel, row.layout == "-" ? "raw" : row.layout);
  std::ofstream(base + ".cu") << source;
  std::ofstream(base + ".cubin", std::ios::binary) << binary;
}

const char* const kOneLine = "extern \"C\" __global__ void one(float* x) { x[threadIdx.x] = 1.0f; }\n";

// The floor: what any program pays for its first NVRTC compile.
int bare_child(const std::string& target) {
  void* lib = ::dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = ::dlopen("libnvrtc.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 3;
  auto create = reinterpret_cast<decltype(&nvrtcCreateProgram)>(::dlsym(lib, "nvrtcCreateProgram"));
  auto compile = reinterpret_cast<decltype(&nvrtcCompileProgram)>(::dlsym(lib, "nvrtcCompileProgram"));
  auto cubin_size = reinterpret_cast<decltype(&nvrtcGetCUBINSize)>(::dlsym(lib, "nvrtcGetCUBINSize"));
  auto cubin = reinterpret_cast<decltype(&nvrtcGetCUBIN)>(::dlsym(lib, "nvrtcGetCUBIN"));
  nvrtcProgram program = nullptr;
  if (create(&program, kOneLine, "one.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 4;
  const std::string arch = "-arch=" + target;
  const char* flags[] = {arch.c_str(), "-no-cache"};
  if (compile(program, 2, flags) != NVRTC_SUCCESS) return 5;
  size_t size = 0;
  cubin_size(program, &size);
  std::string bytes(size, '\0');
  cubin(program, bytes.data());
  return bytes.size() > 64 ? 0 : 6;
}

int library_child(const std::string& target_name) {
  const Target target = Target::parse(target_name);
  const auto compiler = load_compiler(target.backend(), Config::from_environment().compiler_paths());
  CacheConfig memory;
  memory.disk_enabled = false;
  Cache cache(memory);
  Program program;
  program.name = "one.cu";
  program.source = kOneLine;
  return cache.get_or_compile(program, target, *compiler).program->binary.size() > 64 ? 0 : 6;
}

struct ChildTime {
  double wall_ms, cpu_ms;
};

ChildTime run_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("{} failed (status {})", fmt::join(args, " "), status));
  }
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return {wall, ms(usage.ru_utime) + ms(usage.ru_stime)};
}

std::string self_path() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

int cold_start(int children, const std::string& kernc_cli, const std::string& target) {
  const std::string source = fmt::format("/tmp/kernc-cold-start-{}.cu", ::getpid());
  {
    std::ofstream out(source);
    out << kOneLine;
  }
  fmt::print("fresh process, first compile of a one-line raw kernel for {}, driver cache off; best of {} "
             "(median in brackets)\n",
             target, children);
  fmt::print("{:<44} {:>16} {:>16} {:>8}\n", "process", "wall ms", "CPU ms", "vs bare");
  std::vector<std::pair<std::string, std::vector<std::string>>> kinds = {
      {"bare NVRTC (dlopen, create, compile, cubin)", {self_path(), "--bare-child", target}},
      {"kernc library (load_compiler, Cache, compile)", {self_path(), "--library-child", target}}};
  if (!kernc_cli.empty()) {
    kinds.push_back({"kernc --no-cache compile", {kernc_cli, "--no-cache", "compile", source, "-t", target, "-o", "/dev/null"}});
  }
  // The kinds take turns, child by child: a machine whose speed drifts (a neighbour's load,
  // clocks) then weighs on every row alike, where runs of one kind after another gave one
  // row all of a slow spell.
  std::vector<std::vector<double>> walls(kinds.size()), cpus(kinds.size());
  for (int k = 0; k < children; ++k) {
    for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
      const ChildTime t = run_child(kinds[kind].second);
      walls[kind].push_back(t.wall_ms);
      cpus[kind].push_back(t.cpu_ms);
    }
  }
  const double bare_wall = *std::min_element(walls[0].begin(), walls[0].end());
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const double best_wall = *std::min_element(walls[kind].begin(), walls[kind].end());
    fmt::print("{:<44} {:>7.1f} [{:>6.1f}] {:>7.1f} [{:>6.1f}] {:>7.2f}x\n", kinds[kind].first, best_wall,
               bench::median(walls[kind]), *std::min_element(cpus[kind].begin(), cpus[kind].end()),
               bench::median(cpus[kind]), best_wall / bare_wall);
  }
  std::remove(source.c_str());
  return 0;
}

// --parallel-floor: the table's programs again in forked processes, the longest first by
// the times above; the best of `repeat` runs for each count of processes.
void parallel_floor(const std::vector<Row>& rows, const std::string& jobs_list, int repeat, const Compiler& compiler,
                    const Target& target) {
  std::vector<const Row*> sorted;
  for (const auto& row : rows) sorted.push_back(&row);
  std::sort(sorted.begin(), sorted.end(), [](const Row* a, const Row* b) { return a->cpu_ms > b->cpu_ms; });
  std::vector<const Program*> longest_first;
  for (const Row* row : sorted) longest_first.push_back(row->program);
  fmt::print("\nthe machine's floor for -j: the {} programs in forked processes sharing one queue, the longest first, "
             "NVRTC loaded before the fork (best of {})\n",
             longest_first.size(), repeat);
  fmt::print("{:>4} {:>9} {:>9} {:>8} {:>6}\n", "-j", "wall_s", "cpu_s", "speedup", "busy");
  double base = 0;
  std::istringstream words(jobs_list);
  for (int jobs; words >> jobs;) {
    bench::ParallelRun best;
    for (int r = 0; r < repeat; ++r) {
      const bench::ParallelRun run = bench::compile_in_forked_processes(longest_first, jobs, compiler, target);
      if (r == 0 || run.wall_s < best.wall_s) best = run;
    }
    if (base == 0) base = best.wall_s;
    fmt::print("{:>4} {:>9.2f} {:>9.2f} {:>7.2f}x {:>6.1f}\n", jobs, best.wall_s, best.cpu_s, base / best.wall_s,
               best.cpu_s / best.wall_s);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("CUDA_CACHE_DISABLE", "1", 0);  // children inherit it; --driver-cache below overrides
  if (argc == 3 && std::string(argv[1]) == "--bare-child") return bare_child(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--library-child") {
    try {
      return library_child(argv[2]);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s\n", error.what());
      return 1;
    }
  }
  std::string spec_path = "examples/kernels.json", target_name = "sm_90";
  int repeat = 1;
  bool driver_cache = false, phases = true;
  int cold_children = 0;
  std::string kernc_cli, only, dump_dir, floor_jobs;
  std::vector<std::string> extra_flags;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "kernc_compile_bench: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (arg == "--spec") spec_path = value();
    else if (arg == "--target") target_name = value();
    else if (arg == "--repeat") repeat = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--flag") extra_flags.push_back(value());
    else if (arg == "--driver-cache") driver_cache = true;
    else if (arg == "--no-phases") phases = false;
    else if (arg == "--cold-start") cold_children = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--kernc") kernc_cli = value();
    else if (arg == "--only") only = value();
    else if (arg == "--dump") dump_dir = value();
    else if (arg == "--parallel-floor") floor_jobs = value();
    else {
      std::fprintf(stderr, "kernc_compile_bench: unknown argument %s (see the comment atop tools/bench/compile_bench.cpp)\n",
                   arg.c_str());
      return 2;
    }
  }
  // Before anything loads NVRTC: NVRTC reads CUDA_CACHE_DISABLE when it sets its cache up.
  if (driver_cache) {
    ::unsetenv("CUDA_CACHE_DISABLE");
    ::setenv("KERNC_DRIVER_COMPILE_CACHE", "1", 1);
  } else {
    ::setenv("CUDA_CACHE_DISABLE", "1", 1);
    ::setenv("KERNC_DRIVER_COMPILE_CACHE", "0", 1);
  }
  try {
    if (cold_children > 0) return cold_start(cold_children, kernc_cli, target_name);
    const Spec spec = load_spec(spec_path);
    const Target target = Target::parse(target_name);
    const auto compiler = load_compiler(target.backend(), Config::from_environment().compiler_paths());
    fmt::print("kernc_compile_bench: {} for {} with {} ({})\n", spec_path, target.str(), compiler->identity().str(),
               compiler->identity().library_path);
    fmt::print("driver compute cache: {}\n",
               driver_cache ? "ALLOWED (KERNC_DRIVER_COMPILE_CACHE=1): programs it serves are listed, not timed"
                            : "OFF (CUDA_CACHE_DISABLE=1 set before NVRTC loads; kernc passes -no-cache): every row is a "
                              "real compile");
    if (!extra_flags.empty()) fmt::print("extra NVRTC flags: {}\n", fmt::join(extra_flags, " "));
    fmt::print("{} CPU(s) online; times are per program, the median of {} compile(s)\n\n",
               static_cast<long>(::sysconf(_SC_NPROCESSORS_ONLN)), repeat);

    const auto variants = spec.variants();
    std::vector<Row> rows;
    fmt::print("{:<11} {:<16} {:<62} {:>9} {:>9}\n", "kind", "kernel", "variant", "wall ms", "CPU ms");
    for (const auto& variant : variants) {
      if ((variant.kernel + " " + variant.description).find(only) == std::string::npos) continue;
      Row row;
      row.kind = spec.find(variant.kernel).kind();
      row.kernel = variant.kernel;
      row.description = variant.description;
      row.layout = layout_of(row.kind, variant.description);
      row.program = &variant.program;
      Program program = variant.program;
      program.options.raw_flags.insert(program.options.raw_flags.end(), extra_flags.begin(), extra_flags.end());
      std::vector<double> walls, cpus;
      for (int r = 0; r < repeat; ++r) {
        const double cpu0 = cpu_ms();
        const auto start = std::chrono::steady_clock::now();
        const CompiledProgram compiled = compiler->compile(program, target);
        walls.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        cpus.push_back(cpu_ms() - cpu0);
        row.driver_cache = row.driver_cache || compiled.driver_cache_hit;
        if (r == 0 && !dump_dir.empty()) dump(dump_dir, rows.size(), row, program.source, compiled.binary);
      }
      row.wall_ms = bench::median(walls);
      row.cpu_ms = bench::median(cpus);
      if (row.driver_cache) {
        fmt::print("{:<11} {:<16} {:<62} {:>19}\n", row.kind, row.kernel, row.description, "driver's cache");
      } else {
        fmt::print("{:<11} {:<16} {:<62} {:>9.1f} {:>9.1f}\n", row.kind, row.kernel, row.description, row.wall_ms,
                   row.cpu_ms);
      }
      std::fflush(stdout);
      rows.push_back(row);
    }

    std::vector<Row> compiled;
    for (const auto& row : rows) {
      if (!row.driver_cache) compiled.push_back(row);
    }
    const size_t served = rows.size() - compiled.size();
    if (served) fmt::print("\n{} program(s) served by the driver's compute cache: not compiles, left out below\n", served);
    if (compiled.empty()) return 0;
    auto summary = [](const std::string& label, const std::vector<const Row*>& group) {
      std::vector<double> walls, cpus;
      double cpu_sum = 0;
      for (const Row* row : group) {
        walls.push_back(row->wall_ms);
        cpus.push_back(row->cpu_ms);
        cpu_sum += row->cpu_ms;
      }
      fmt::print("{:<34} {:>5} {:>14.1f} {:>14.1f} {:>14.0f}\n", label, group.size(), bench::median(walls),
                 bench::median(cpus), cpu_sum);
    };
    fmt::print("\n{:<34} {:>5} {:>14} {:>14} {:>14}\n", "median by", "progs", "median wall ms", "median CPU ms",
               "total CPU ms");
    std::vector<const Row*> all;
    std::map<std::string, std::vector<const Row*>> by_kind, by_layout;
    for (const auto& row : compiled) {
      all.push_back(&row);
      by_kind[row.kind].push_back(&row);
      by_layout[row.layout].push_back(&row);
    }
    summary("every program", all);
    for (const auto& [kind, group] : by_kind) summary("kind " + kind, group);
    for (const auto& [layout, group] : by_layout) summary("layout " + layout, group);

    if (!floor_jobs.empty()) parallel_floor(compiled, floor_jobs, repeat, *compiler, target);
    if (phases) {
      std::vector<const Row*> sorted = all;
      std::sort(sorted.begin(), sorted.end(), [](const Row* a, const Row* b) { return a->cpu_ms < b->cpu_ms; });
      print_phases(*compiler, *sorted[sorted.size() / 2], "the median program", target, extra_flags);
      print_phases(*compiler, *sorted.back(), "the slowest program", target, extra_flags);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kernc_compile_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
