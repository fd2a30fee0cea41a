// XLA vs hloscope panel: for a module of an XLA dump folder that holds it before and after
// XLA's optimization, XLA's fusion (the after file) beside hloscope's at the current step,
// op by op (compiler/layers/fusion_comparison.h): per layer its ops, XLA's kernels,
// hloscope's kernels and the share of ops grouped alike; the producer -> consumer pairs one
// side fused and the other did not (choosing one highlights its edge in the graph). Computed
// off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>

#include "compiler/layers/fusion_comparison.h"
#include "views/document/document_panel.h"

class QLabel;
class QListWidget;
class QTreeWidget;

namespace hloscope {

class XlaComparisonPanel : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit XlaComparisonPanel(QWidget* parent = nullptr);
    ~XlaComparisonPanel() override;

    QString summaryText() const;
    QTreeWidget* layerTree() const { return m_layers; }
    QListWidget* pairList() const { return m_pairs; }
    const FusionComparison* comparison() const { return m_comparison.get(); }
    bool isComputing() const { return m_watcher->isRunning(); }

public slots:
    void setState(hloscope::DocumentStatePtr state) override;

signals:
    // A pair fused by one side only was chosen (instruction names of the module before).
    void pairSelected(const QString& producer, const QString& consumer);
    void comparisonReady();  // for the newest state

public:
    struct Result {
        std::shared_ptr<const FusionComparison> comparison;
        QString xlaFile;
        QString error;
        int64_t generation = -1;
    };

private:
    void compute();
    void onComputed();
    void fill();

    QLabel* m_summary = nullptr;
    QTreeWidget* m_layers = nullptr;
    QListWidget* m_pairs = nullptr;
    QFutureWatcher<Result>* m_watcher = nullptr;
    DocumentStatePtr m_state;
    std::shared_ptr<const FusionComparison> m_comparison;
    QString m_xlaFile;
    bool m_recompute = false;
};

}  // namespace hloscope
