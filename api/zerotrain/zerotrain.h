// zerotrain: train models too large for one device, ZeRO-sharded across ranks, from C++.
// This header includes the whole public API: Engine (engine.h), Config (config.h), models
// and layers (modules.h), batch sources (data.h), losses (loss.h), tensors (tensor.h) and
// the exceptions (errors.h). Headers outside <zerotrain/...> are the implementation's.
#pragma once

#include "zerotrain/config.h"
#include "zerotrain/data.h"
#include "zerotrain/engine.h"
#include "zerotrain/errors.h"
#include "zerotrain/loss.h"
#include "zerotrain/modules.h"
#include "zerotrain/tensor.h"
