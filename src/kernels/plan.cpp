// The accessors of ElementwisePlan and ReductionPlan (include/kernc/plan.hpp).

#include "kernc/plan.hpp"

#include "kernels/plan_data.hpp"

namespace kernc {

const CallTypes& ElementwisePlan::types() const noexcept { return data_->types; }
const ResolvedTypes& ElementwisePlan::resolved() const noexcept { return data_->resolved; }
const Layout& ElementwisePlan::layout() const noexcept { return data_->loop.layout; }
const std::vector<std::int64_t>& ElementwisePlan::shape() const noexcept { return data_->shape; }
const std::vector<ArrayRef>& ElementwisePlan::outputs() const noexcept { return data_->outputs; }
bool ElementwisePlan::allocates_outputs() const noexcept { return data_->outputs_given.empty(); }
const LaunchConfig& ElementwisePlan::launch_config() const noexcept { return data_->launch; }
int ElementwisePlan::multiprocessors() const noexcept { return data_->multiprocessors; }

const CallTypes& ReductionPlan::types() const noexcept { return data_->types; }
const ResolvedTypes& ReductionPlan::resolved() const noexcept { return data_->resolved; }
const Layout& ReductionPlan::layout() const noexcept { return data_->layout; }
const std::vector<std::int64_t>& ReductionPlan::input_shape() const noexcept { return data_->in_shape; }
const std::vector<int>& ReductionPlan::axes() const noexcept { return data_->axes; }
const std::vector<ArrayRef>& ReductionPlan::outputs() const noexcept { return data_->outputs; }
bool ReductionPlan::allocates_outputs() const noexcept { return data_->outputs_given.empty(); }
std::int64_t ReductionPlan::reduce_size() const noexcept { return data_->reduce_size; }
std::int64_t ReductionPlan::splits() const noexcept { return data_->splits; }
const LaunchConfig& ReductionPlan::launch_config() const noexcept { return data_->launch; }
int ReductionPlan::multiprocessors() const noexcept { return data_->multiprocessors; }

}  // namespace kernc
