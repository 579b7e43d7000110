// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <QFrame>

class QLabel;
class QPushButton;
class QToolButton;

namespace probescope::ui {

/**
 * @brief A warning strip above the tree when the shown pair was loaded with problems (a dump.json cut
 * short, a stack.json that does not parse, …): the first problem in a sentence, how many there are, and
 * a button to the Diagnostics list. Hidden when the pair loaded cleanly; the user may dismiss it.
 */
class LoadProblemBanner : public QFrame
{
    Q_OBJECT
public:
    explicit LoadProblemBanner(QWidget* parent = nullptr);

    /// Shows the banner when `diagnostics` hold a warning or an error, else hides it.
    void setDiagnostics(const Diagnostics& diagnostics);
    void clear();
    QString text() const;

signals:
    void detailsRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();

    Diagnostics m_problems;
    QLabel* m_text = nullptr;
    QPushButton* m_details = nullptr;
    QToolButton* m_close = nullptr;
};

} // namespace probescope::ui
