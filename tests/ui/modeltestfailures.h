// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QtGlobal>
#include <QString>

#include <gtest/gtest.h>

#include <string>

namespace probescope::testing {

/**
 * @brief Turns QAbstractItemModelTester's reports (qt.modeltest warnings) into test failures while it
 * lives. The tester's Fatal mode would abort the whole test program instead of failing one test.
 */
class ModelTestFailures
{
public:
    ModelTestFailures() { s_previous = qInstallMessageHandler(&ModelTestFailures::handle); }
    ~ModelTestFailures() { qInstallMessageHandler(s_previous); }
    ModelTestFailures(const ModelTestFailures&) = delete;
    ModelTestFailures& operator=(const ModelTestFailures&) = delete;

private:
    static void handle(QtMsgType type, const QMessageLogContext& context, const QString& message)
    {
        if (context.category && std::string(context.category) == "qt.modeltest" && type >= QtWarningMsg)
            ADD_FAILURE() << "QAbstractItemModelTester: " << message.toStdString();
        else if (s_previous)
            s_previous(type, context, message);
    }
    static inline QtMessageHandler s_previous = nullptr;
};

} // namespace probescope::testing
