#pragma once
/// \file
/// Every public header of kernc, for programs that want the whole API in one line. Each
/// header also stands alone: include only what you use to keep the layers you pull in few
/// (docs/ARCHITECTURE.md, "Layers").

#include "kernc/array.hpp"
#include "kernc/array_ref.hpp"
#include "kernc/cache.hpp"
#include "kernc/call.hpp"
#include "kernc/compile_options.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "kernc/devices.hpp"
#include "kernc/diagnostics.hpp"
#include "kernc/dtype.hpp"
#include "kernc/engine.hpp"
#include "kernc/error.hpp"
#include "kernc/host_values.hpp"
#include "kernc/kernel_options.hpp"
#include "kernc/kernels.hpp"
#include "kernc/limits.hpp"
#include "kernc/log.hpp"
#include "kernc/npy.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/program.hpp"
#include "kernc/runtime.hpp"
#include "kernc/scalar.hpp"
#include "kernc/signature.hpp"
#include "kernc/spec_file.hpp"
#include "kernc/target.hpp"
#include "kernc/version.hpp"
