// The trainer's forward and backward in double precision, for the finite-difference checks in
// train_test.cpp. Instantiated here rather than in core/train.cpp: the app and the sanitized builds
// of everything else then compile the kernels once (float), not twice.
#include "core/train_kernels.hpp"

namespace attnviz {

template Params<double> make_params<double>(const TrainConfig&);
template double loss_and_grad<double>(const Params<double>&, const Batch&, Params<double>*, int,
                                      std::vector<double>*);

}  // namespace attnviz
