// The model's layers as the views share them: the LayerTree
// (compiler/layers/layer_tree.h) of a document's loaded module, with the
// module it refers to kept alive. Built once per document by the worker;
// immutable.
#pragma once

#include <memory>

#include "compiler/layers/layer_tree.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

struct ModelLayers {
    std::shared_ptr<const HloModule> module;  // the loaded module the tree refers to
    LayerTree tree;
};

using ModelLayersPtr = std::shared_ptr<const ModelLayers>;

}  // namespace hloscope
