// The kernc command line. Each subcommand lives in its own file (CLI11's
// subcom_in_files layout): an options struct, a setup_x and a run_x.

#include <cstdio>

#include <fmt/format.h>

#include "cli_context.hpp"
#include "kernc/compiler.hpp"
#include "kernc/version.hpp"

int main(int argc, char** argv) {
  using namespace kernc::cli;
  // kernc started by itself as a compile worker of a parallel precompile (NOTE [ compile
  // worker processes ], src/compiler/compile_workers.cpp): not a command for people.
  if (argc == 2 && std::string(argv[1]) == kCompileWorkerArgument) return kernc::serve_compile_requests(3);
  CLI::App app{"kernc: compile GPU kernels at run time, with a cache you can trust", "kernc"};
  app.set_version_flag("--version", std::string(kernc::version()));
  app.require_subcommand(1);
  app.footer(exit_codes_help({kExitCompileFailed, kExitEnvironment, kExitIo, kExitCacheDamaged, kExitNotFound, kExitNoGpu,
                              kExitNotPrecompiled}));
  app.fallthrough();  // global flags may also follow the subcommand
  GlobalOptions global;
  add_global_options(app, global);
  std::vector<Subcommand> subcommands = {setup_compile(app, global), setup_cache(app, global), setup_info(app, global),
                                          setup_precompile(app, global), setup_run(app, global)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    // CLI11's own wording stays inside: kernc says what was wrong its own way.
    fmt::print(stderr, "{}", usage_message(error, app));
    return kExitUsage;
  }
  try {
    for (const auto& subcommand : subcommands) {
      if (subcommand.app->parsed()) return subcommand.run();
    }
    return kExitUsage;
  } catch (const kernc::Error& error) {
    print_error(error);
    return exit_code_for(error);
  } catch (const std::exception& error) {
    fmt::print(stderr, "kernc: internal error: {}\n", error.what());
    return kExitInternal;
  }
}
