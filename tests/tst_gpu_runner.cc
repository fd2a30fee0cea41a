// hloscope-gpu-runner end to end: command line, exit codes, plan validation (all before the CUDA
// driver is loaded, so it is tested without a GPU), the "no GPU" path (a driver library that does
// not exist), and, only where a GPU is present, a small plan run for real.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

struct Result {
    int exitCode = -1;  // -1: did not start, or crashed
    QString out;
    QString err;
};

// Runs the runner; `noDriver` points HLOSCOPE_CUDA_LIBRARY at a library that does not exist.
Result runRunner(const QStringList& args, bool noDriver = false) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (noDriver) env.insert(u"HLOSCOPE_CUDA_LIBRARY"_s, u"/nonexistent/libcuda.so.1"_s);
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(HLOSCOPE_GPU_RUNNER_PATH), args);
    if (!process.waitForStarted()) return {};
    process.closeWriteChannel();
    process.waitForFinished(120000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

// out[i] = a[i] + b[i] for 1024 floats (nvcc -ptx output, with an older PTX version line).
const char* kAddPtx = R"PTX(.version 7.8
.target sm_80
.address_size 64

// add_1024(out, a, b)
.visible .entry add_1024(
	.param .u64 add_1024_param_0,
	.param .u64 add_1024_param_1,
	.param .u64 add_1024_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<11>;

	ld.param.u64 	%rd1, [add_1024_param_0];
	ld.param.u64 	%rd2, [add_1024_param_1];
	ld.param.u64 	%rd3, [add_1024_param_2];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r1, %r2, %r3, %r4;
	setp.gt.s32 	%p1, %r1, 1023;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd3;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd1;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;

$L__BB0_2:
	ret;
}
)PTX";

constexpr int kCount = 1024;  // floats per buffer

QByteArray floatBytes(float base) {
    QByteArray bytes(kCount * 4, Qt::Uninitialized);
    for (int i = 0; i < kCount; ++i) {
        float value = base + float(i);
        memcpy(bytes.data() + i * 4, &value, 4);
    }
    return bytes;
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray array;
    for (int v : values) array.append(v);
    return array;
}

QJsonObject buffer(int id, int offset) {
    return {{u"id"_s, id},
            {u"offset"_s, offset},
            {u"bytes"_s, kCount * 4},
            {u"name"_s, u"%b"_s + QString::number(id)}};
}

// A valid plan: memset.1 fills buffer 4, add.2 sets buffer 2 = x + y, copy.3 copies it to 3.
QJsonObject validPlan() {
    QJsonArray buffers;
    for (int id = 0; id < 5; ++id) buffers.append(buffer(id, id * kCount * 4));
    QJsonObject add{{u"kind"_s, u"kernel"_s},        {u"name"_s, u"add.2"_s},
                    {u"entry"_s, u"add_1024"_s},     {u"grid"_s, ints({4, 1, 1})},
                    {u"block"_s, ints({256, 1, 1})}, {u"shared_bytes"_s, 0},
                    {u"args"_s, ints({2, 0, 1})}};
    return {
        {u"format"_s, u"hloscope-gpu-plan"_s},
        {u"version"_s, 1},
        {u"module"_s, u"add"_s},
        {u"mode"_s, u"fused"_s},
        {u"sm"_s, u"sm_80"_s},
        {u"ptx"_s, u"kernels.ptx"_s},
        {u"arena_bytes"_s, 5 * kCount * 4},
        {u"buffers"_s, buffers},
        {u"inputs"_s, QJsonArray{QJsonObject{{u"parameter"_s, 0},
                                             {u"name"_s, u"x"_s},
                                             {u"buffer"_s, 0},
                                             {u"file"_s, u"inputs/0.bin"_s},
                                             {u"bytes"_s, kCount * 4},
                                             {u"type"_s, u"f32"_s},
                                             {u"dims"_s, ints({kCount})}}}},
        {u"constants"_s,
         QJsonArray{QJsonObject{
             {u"buffer"_s, 1}, {u"file"_s, u"constants/0.bin"_s}, {u"bytes"_s, kCount * 4}}}},
        {u"outputs"_s,
         QJsonArray{QJsonObject{{u"index"_s, 0}, {u"buffer"_s, 3}, {u"bytes"_s, kCount * 4}},
                    QJsonObject{{u"index"_s, 1}, {u"buffer"_s, 4}, {u"bytes"_s, 16}}}},
        {u"steps"_s, QJsonArray{QJsonObject{{u"kind"_s, u"memset"_s},
                                            {u"name"_s, u"memset.1"_s},
                                            {u"buffer"_s, 4},
                                            {u"bytes"_s, kCount * 4},
                                            {u"value"_s, 7}},
                                add,
                                QJsonObject{{u"kind"_s, u"copy"_s},
                                            {u"name"_s, u"copy.3"_s},
                                            {u"src"_s, 2},
                                            {u"dst"_s, 3},
                                            {u"bytes"_s, kCount * 4}}}},
        {u"warmup"_s, 1},
        {u"repeat"_s, 3},
    };
}

// Replaces member `key` of steps[index].
QJsonObject withStepField(QJsonObject plan, int index, const QString& key,
                          const QJsonValue& value) {
    QJsonArray steps = plan[u"steps"_s].toArray();
    QJsonObject step = steps[index].toObject();
    step[key] = value;
    steps[index] = step;
    plan[u"steps"_s] = steps;
    return plan;
}

// validPlan() as a while loop: memset.1 sets buffer 4 (the predicate) to 7; loop.test
// leaves the loop when its first byte is 0; the body runs add.2 and, unless `runaway`, clears
// the predicate (stop.3); loop.back jumps back (at most 10 times); copy.3 follows the loop.
QJsonObject loopPlan(bool runaway = false) {
    QJsonObject plan = validPlan();
    const QJsonArray steps = plan[u"steps"_s].toArray();
    QJsonArray looped{steps[0]};
    const int after = runaway ? 4 : 5;
    looped.append(QJsonObject{{u"kind"_s, u"branch"_s},
                              {u"name"_s, u"loop.test"_s},
                              {u"predicate"_s, 4},
                              {u"if_zero"_s, after}});
    looped.append(steps[1]);
    if (!runaway) {
        looped.append(QJsonObject{{u"kind"_s, u"memset"_s},
                                  {u"name"_s, u"stop.3"_s},
                                  {u"buffer"_s, 4},
                                  {u"bytes"_s, 16},
                                  {u"value"_s, 0}});
    }
    looped.append(QJsonObject{
        {u"kind"_s, u"jump"_s}, {u"name"_s, u"loop.back"_s}, {u"target"_s, 1}, {u"limit"_s, 10}});
    looped.append(steps[2]);
    plan[u"steps"_s] = looped;
    return plan;
}

// validPlan() as a conditional on buffer 4 (7 after memset.1, so true): the true branch
// runs add.2 and jumps past the false branch, which would clear buffer 2 (zero.4).
QJsonObject switchPlan() {
    QJsonObject plan = validPlan();
    const QJsonArray steps = plan[u"steps"_s].toArray();
    plan[u"steps"_s] = QJsonArray{steps[0],
                                  QJsonObject{{u"kind"_s, u"switch"_s},
                                              {u"name"_s, u"cond.switch"_s},
                                              {u"index"_s, 4},
                                              {u"index_type"_s, u"pred"_s},
                                              {u"targets"_s, ints({2, 4})}},
                                  steps[1],
                                  QJsonObject{{u"kind"_s, u"jump"_s},
                                              {u"name"_s, u"cond.done0"_s},
                                              {u"target"_s, 5},
                                              {u"limit"_s, 1}},
                                  QJsonObject{{u"kind"_s, u"memset"_s},
                                              {u"name"_s, u"zero.4"_s},
                                              {u"buffer"_s, 2},
                                              {u"bytes"_s, kCount * 4},
                                              {u"value"_s, 0}},
                                  steps[2]};
    return plan;
}

}  // namespace

class TestGpuRunner : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void versionAndHelp();
    void usageErrors();
    void noGpu();
    void loopPlanValidates();
    void multiDevicePlanValidates();
    void unparsableJson();
    void invalidPlans_data();
    void invalidPlans();
    void badFiles();
    void missingPlanDirectory();
    void noCublasWithoutFallback();
    void runsWhereAGpuIsPresent();

private:
    // A plan directory `name` holding plan.json (from `plan`), kernels.ptx and the input and
    // constant files of validPlan(); returns its path.
    QString writePlanDir(const QString& name, const QJsonObject& plan);
    static void writeFile(const QString& path, const QByteArray& bytes);
    QTemporaryDir m_dir;
};

void TestGpuRunner::initTestCase() {
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFile::exists(QStringLiteral(HLOSCOPE_GPU_RUNNER_PATH)), HLOSCOPE_GPU_RUNNER_PATH);
}

void TestGpuRunner::writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(bytes), bytes.size());
}

QString TestGpuRunner::writePlanDir(const QString& name, const QJsonObject& plan) {
    const QString dir = m_dir.filePath(name);
    writeFile(dir + u"/plan.json"_s, QJsonDocument(plan).toJson());
    writeFile(dir + u"/kernels.ptx"_s, kAddPtx);
    writeFile(dir + u"/inputs/0.bin"_s, floatBytes(1.0f));
    writeFile(dir + u"/constants/0.bin"_s, floatBytes(0.5f));
    return dir;
}

void TestGpuRunner::versionAndHelp() {
    Result version = runRunner({u"--version"_s});
    QCOMPARE(version.exitCode, 0);
    QVERIFY2(version.out.startsWith(u"hloscope-gpu-runner 0.1.0\n"_s), qPrintable(version.out));
    QVERIFY(version.out.contains(u"plan format 1"_s));
    Result help = runRunner({u"--help"_s});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains(u"PLAN_DIR"_s));
    QVERIFY(help.out.contains(u"--probe OUT.json"_s));
    QVERIFY(help.out.contains(u"--no-cublas"_s));
}

void TestGpuRunner::usageErrors() {
    const QList<QStringList> bad = {
        {},
        {u"--frobnicate"_s},
        {u"plan"_s, u"--repeat"_s, u"abc"_s},
        {u"plan"_s, u"--repeat"_s, u"0"_s},
        {u"plan"_s, u"--warmup"_s, u"-1"_s},
        {u"plan"_s, u"--repeat"_s},
        {u"--probe"_s},
        {u"--probe"_s, u"out.json"_s, u"--bytes"_s, u"12x"_s},
        {u"--probe"_s, u"out.json"_s, u"--info"_s},
        {u"--info"_s, u"plan"_s},
        {u"plan1"_s, u"plan2"_s},
        {u"plan"_s, u"--device"_s, u"gpu0"_s},
    };
    for (const QStringList& args : bad) {
        Result r = runRunner(args, true);
        QVERIFY2(r.exitCode == 64,
                 qPrintable(args.join(u' ') + u" -> "_s + QString::number(r.exitCode)));
        QVERIFY2(r.err.startsWith(u"hloscope-gpu-runner: "_s), qPrintable(r.err));
        QVERIFY(r.err.contains(u"--help"_s));
    }
}

void TestGpuRunner::noGpu() {
    const QString dir = writePlanDir(u"nogpu"_s, validPlan());
    const QString probeFile = m_dir.filePath(u"probe.json"_s);
    const QList<QStringList> commands = {{dir}, {u"--probe"_s, probeFile}, {u"--info"_s}};
    for (const QStringList& args : commands) {
        Result r = runRunner(args, true);
        QVERIFY2(r.exitCode == 2,
                 qPrintable(args.join(u' ') + u": "_s + QString::number(r.exitCode) + r.err));
        QVERIFY2(
            r.err.startsWith(
                u"hloscope-gpu-runner: no GPU found: cannot load /nonexistent/libcuda.so.1 ("_s),
            qPrintable(r.err));
        QCOMPARE(r.err.count(u'\n'), 1);  // exactly one line
        QVERIFY(r.out.isEmpty());
    }
    QVERIFY(!QFile::exists(probeFile));
    QVERIFY(!QFile::exists(dir + u"/results.json"_s));
}

// Plans with a while loop or a conditional pass validation: without a driver it ends at "no GPU
// found".
void TestGpuRunner::loopPlanValidates() {
    const QList<QPair<QString, QJsonObject>> plans = {
        {u"loop"_s, loopPlan()}, {u"loop_runaway"_s, loopPlan(true)}, {u"switch"_s, switchPlan()}};
    for (const auto& [name, plan] : plans) {
        Result r = runRunner({writePlanDir(name, plan)}, true);
        QVERIFY2(r.exitCode == 2 && r.err.contains(u"no GPU found"_s), qPrintable(r.err));
    }
}

// A plan on 2 devices whose kernel reads device 1's buffer and whose copy crosses devices
// validates, up to the missing GPU.
void TestGpuRunner::multiDevicePlanValidates() {
    QJsonObject plan = withStepField(validPlan(), 1, u"arg_devices"_s, ints({0, 1, 0}));
    plan = withStepField(plan, 2, u"src_device"_s, 1);
    plan[u"replicas"_s] = 2;
    QJsonArray outputs = plan[u"outputs"_s].toArray();
    QJsonObject second = outputs[1].toObject();
    second[u"device"_s] = 1;
    outputs[1] = second;
    plan[u"outputs"_s] = outputs;
    const QString dir = writePlanDir(u"multi_device"_s, plan);
    Result r = runRunner({dir}, true);
    QVERIFY2(r.exitCode == 2 && r.err.contains(u"no GPU found"_s), qPrintable(r.err));
}

void TestGpuRunner::unparsableJson() {
    const QString dir = writePlanDir(u"unparsable"_s, validPlan());
    writeFile(dir + u"/plan.json"_s,
              "{\n  \"format\": \"hloscope-gpu-plan\",\n  \"version\": 1,\n  oops\n}\n");
    Result r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(dir + u"/plan.json: line 4, column 3: syntax error"_s),
             qPrintable(r.err));
}

void TestGpuRunner::invalidPlans_data() {
    QTest::addColumn<QJsonObject>("plan");
    QTest::addColumn<QString>("message");
    QJsonObject plan = validPlan();

    QJsonObject wrongFormat = plan;
    wrongFormat[u"format"_s] = u"hloscope-gpu-plans"_s;
    QTest::newRow("format")
        << wrongFormat
        << u"plan.json: \"format\" is \"hloscope-gpu-plans\", expected \"hloscope-gpu-plan\""_s;

    QJsonObject wrongVersion = plan;
    wrongVersion[u"version"_s] = 2;
    QTest::newRow("version") << wrongVersion
                             << u"plan.json: \"version\" is 2; this runner reads version 1"_s;

    QJsonObject outside = plan;
    QJsonArray buffers = outside[u"buffers"_s].toArray();
    QJsonObject last = buffers[4].toObject();
    last[u"bytes"_s] = kCount * 4 + 1;
    buffers[4] = last;
    outside[u"buffers"_s] = buffers;
    QTest::newRow("outside arena")
        << outside
        << u"plan.json: buffers[4]: buffer 4 (offset 16384, 4097 bytes) ends outside "
           "the arena of 20480 bytes"_s;

    QJsonObject misaligned = plan;
    buffers = misaligned[u"buffers"_s].toArray();
    QJsonObject first = buffers[1].toObject();
    first[u"offset"_s] = 100;
    buffers[1] = first;
    misaligned[u"buffers"_s] = buffers;
    QTest::newRow("misaligned") << misaligned
                                << u"plan.json: buffers[1]: offset 100 is not 256-byte aligned"_s;

    QTest::newRow("unknown arg")
        << withStepField(plan, 1, u"args"_s, ints({2, 0, 17}))
        << u"plan.json: steps[1] (add.2): args[2] refers to buffer 17, which the plan "
           "does not define"_s;
    QTest::newRow("unknown copy src")
        << withStepField(plan, 2, u"src"_s, 9)
        << u"plan.json: steps[2] (copy.3): \"src\" refers to buffer 9"_s;
    QTest::newRow("bad grid")
        << withStepField(plan, 1, u"grid"_s, ints({0, 1, 1}))
        << u"plan.json: steps[1] (add.2): \"grid\" must be an array of 3 positive integers"_s;
    QTest::newRow("short block")
        << withStepField(plan, 1, u"block"_s, ints({256, 1}))
        << u"steps[1] (add.2): \"block\" must be an array of 3 positive integers"_s;
    QTest::newRow("unknown entry")
        << withStepField(plan, 1, u"entry"_s, u"mul_1024"_s)
        << u"steps[1] (add.2): entry mul_1024 is not defined in kernels.ptx"_s;
    QTest::newRow("arg count")
        << withStepField(plan, 1, u"args"_s, ints({2, 0}))
        << u"steps[1] (add.2): add_1024 takes 3 parameters in kernels.ptx, the step "
           "passes 2 args"_s;
    QTest::newRow("copy too big")
        << withStepField(plan, 2, u"bytes"_s, kCount * 8)
        << u"steps[2] (copy.3): the copy of 8192 bytes does not fit buffer"_s;
    QTest::newRow("memset value")
        << withStepField(plan, 0, u"value"_s, 256)
        << u"steps[0] (memset.1): \"value\" must be an integer from 0 to 255"_s;
    QTest::newRow("unknown kind") << withStepField(plan, 0, u"kind"_s, u"fill"_s)
                                  << u"steps[0] (memset.1): \"kind\" must be"_s;

    QJsonObject gemm = plan;
    QJsonArray steps = gemm[u"steps"_s].toArray();
    steps.append(QJsonObject{{u"kind"_s, u"gemm"_s},
                             {u"name"_s, u"dot.4"_s},
                             {u"type"_s, u"f32"_s},
                             {u"batch"_s, 1},
                             {u"m"_s, 16},
                             {u"n"_s, 16},
                             {u"k"_s, 16},
                             {u"lhs"_s, 0},
                             {u"rhs"_s, 17},
                             {u"out"_s, 2}});
    gemm[u"steps"_s] = steps;
    QTest::newRow("gemm rhs")
        << gemm
        << u"steps[3] (dot.4): \"rhs\" refers to buffer 17, which the plan does not define"_s;

    // Control flow: where branches and jumps go, and what they read.
    const QJsonObject loop = loopPlan();
    QTest::newRow("branch backwards")
        << withStepField(loop, 1, u"if_zero"_s, 1)
        << u"steps[1] (loop.test): \"if_zero\" is 1; a branch goes on at a later step, at most "
           "the step count (6)"_s;
    QTest::newRow("branch past the end")
        << withStepField(loop, 1, u"if_zero"_s, 7)
        << u"steps[1] (loop.test): \"if_zero\" is 7; a branch goes on at a later step"_s;
    QTest::newRow("branch predicate")
        << withStepField(loop, 1, u"predicate"_s, 9)
        << u"steps[1] (loop.test): \"predicate\" refers to buffer 9"_s;
    QTest::newRow("jump target")
        << withStepField(loop, 4, u"target"_s, 7)
        << u"steps[4] (loop.back): \"target\" is 7; the plan has 6 steps"_s;
    QTest::newRow("jump limit") << withStepField(loop, 4, u"limit"_s, 0)
                                << u"steps[4] (loop.back): \"limit\" must be at least 1"_s;

    const QJsonObject choice = switchPlan();
    QTest::newRow("switch backwards")
        << withStepField(choice, 1, u"targets"_s, ints({1, 4}))
        << u"steps[1] (cond.switch): targets[0] is 1; a switch goes on at a later step"_s;
    QTest::newRow("switch index type")
        << withStepField(choice, 1, u"index_type"_s, u"f32"_s)
        << u"steps[1] (cond.switch): \"index_type\" must be \"pred\" or \"s32\", not \"f32\""_s;
    QTest::newRow("switch pred targets")
        << withStepField(choice, 1, u"targets"_s, ints({2, 4, 5}))
        << u"steps[1] (cond.switch): \"targets\" must list two steps (true, false)"_s;

    // Multi-device plans: every device index within replicas x partitions.
    QJsonObject two = plan;
    two[u"replicas"_s] = 2;
    QTest::newRow("step device")
        << withStepField(two, 1, u"device"_s, 2)
        << u"steps[1] (add.2): \"device\" is device 2; the plan runs on 2"_s;
    QTest::newRow("copy source device")
        << withStepField(two, 2, u"src_device"_s, 5)
        << u"steps[2] (copy.3): \"src_device\" is device 5; the plan runs on 2"_s;
    QTest::newRow("argument devices")
        << withStepField(two, 1, u"arg_devices"_s, ints({0, 1}))
        << u"steps[1] (add.2): \"arg_devices\" must list a device per argument"_s;
    QTest::newRow("argument device out of range")
        << withStepField(two, 1, u"arg_devices"_s, ints({0, 1, 2}))
        << u"steps[1] (add.2): arg_devices[2] is not a device of the plan"_s;
    QJsonObject tooMany = plan;
    tooMany[u"replicas"_s] = 64;
    tooMany[u"partitions"_s] = 8;
    QTest::newRow("devices")
        << tooMany << u"plan.json: \"replicas\" x \"partitions\" must be 1 to 256 devices"_s;
    QJsonObject inputDevice = two;
    QJsonArray inputs = inputDevice[u"inputs"_s].toArray();
    QJsonObject input = inputs[0].toObject();
    input[u"device"_s] = 3;
    inputs[0] = input;
    inputDevice[u"inputs"_s] = inputs;
    QTest::newRow("input device")
        << inputDevice << u"plan.json: inputs[0]: \"device\" is device 3; the plan runs on 2"_s;

    QJsonObject noSteps = plan;
    noSteps.remove(u"steps"_s);
    QTest::newRow("no steps") << noSteps << u"plan.json: \"steps\" is missing"_s;

    QJsonObject badOutput = plan;
    badOutput[u"outputs"_s] =
        QJsonArray{QJsonObject{{u"index"_s, 0}, {u"buffer"_s, 3}, {u"bytes"_s, u"4096"_s}}};
    QTest::newRow("output bytes")
        << badOutput
        << u"plan.json: outputs[0]: \"bytes\" must be a non-negative integer, not "
           "\"4096\""_s;
}

// Each broken plan exits 1 with a message naming plan.json and the problem.
void TestGpuRunner::invalidPlans() {
    QFETCH(QJsonObject, plan);
    QFETCH(QString, message);
    const QString dir =
        writePlanDir(QString::fromUtf8(QTest::currentDataTag()).replace(u' ', u'_'), plan);
    Result r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.startsWith(u"hloscope-gpu-runner: "_s + dir + u"/plan.json: "_s),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
}

void TestGpuRunner::badFiles() {
    // An input of the wrong size.
    QString dir = writePlanDir(u"short_input"_s, validPlan());
    writeFile(dir + u"/inputs/0.bin"_s, QByteArray(100, '\0'));
    Result r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(
        r.err.contains(u"plan.json: inputs[0]: inputs/0.bin has 100 bytes, the plan says 4096"_s),
        qPrintable(r.err));

    // A constant file that is not there.
    dir = writePlanDir(u"missing_constant"_s, validPlan());
    QVERIFY(QFile::remove(dir + u"/constants/0.bin"_s));
    r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(u"plan.json: constants[0]: cannot read constants/0.bin"_s),
             qPrintable(r.err));

    // The PTX module is missing.
    dir = writePlanDir(u"missing_ptx"_s, validPlan());
    QVERIFY(QFile::remove(dir + u"/kernels.ptx"_s));
    r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(u"plan.json: ptx: cannot read kernels.ptx"_s), qPrintable(r.err));
}

void TestGpuRunner::missingPlanDirectory() {
    const QString dir = m_dir.filePath(u"no_such_plan"_s);
    Result r = runRunner({dir});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(dir + u"/plan.json: cannot read the plan"_s), qPrintable(r.err));
}

void TestGpuRunner::noCublasWithoutFallback() {
    QJsonObject plan = validPlan();
    QJsonArray steps = plan[u"steps"_s].toArray();
    steps.append(QJsonObject{{u"kind"_s, u"gemm"_s},
                             {u"name"_s, u"dot.4"_s},
                             {u"type"_s, u"f32"_s},
                             {u"m"_s, 16},
                             {u"n"_s, 16},
                             {u"k"_s, 16},
                             {u"lhs"_s, 0},
                             {u"rhs"_s, 1},
                             {u"out"_s, 2}});
    plan[u"steps"_s] = steps;
    const QString dir = writePlanDir(u"no_cublas"_s, plan);
    Result r = runRunner({dir, u"--no-cublas"_s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(
        r.err.contains(
            u"plan.json: steps[3] (dot.4): --no-cublas, and the step has no fallback kernel"_s),
        qPrintable(r.err));
}

// Only on a machine with a GPU (skipped with exit code 2 elsewhere): the valid plan runs and
// its outputs and results.json are right.
void TestGpuRunner::runsWhereAGpuIsPresent() {
    const QString dir = writePlanDir(u"gpu_run"_s, validPlan());
    const QString out = m_dir.filePath(u"gpu_run_out"_s);
    Result r = runRunner({dir, u"--output"_s, out, u"--quiet"_s});
    if (r.exitCode == 2 && r.err.contains(u"no GPU found"_s)) QSKIP("no GPU here");
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QFile sum(out + u"/outputs/0.bin"_s);
    QVERIFY(sum.open(QIODevice::ReadOnly));
    const QByteArray bytes = sum.readAll();
    QCOMPARE(bytes.size(), kCount * 4);
    for (int i = 0; i < kCount; ++i) {
        float value = 0;
        memcpy(&value, bytes.constData() + i * 4, 4);
        QCOMPARE(value, 1.5f + 2.0f * float(i));
    }
    QFile fill(out + u"/outputs/1.bin"_s);
    QVERIFY(fill.open(QIODevice::ReadOnly));
    QCOMPARE(fill.readAll(), QByteArray(16, '\7'));
    QFile resultsFile(out + u"/results.json"_s);
    QVERIFY(resultsFile.open(QIODevice::ReadOnly));
    const QJsonObject results = QJsonDocument::fromJson(resultsFile.readAll()).object();
    QCOMPARE(results[u"format"_s].toString(), u"hloscope-gpu-results"_s);
    QCOMPARE(results[u"run_ms"_s].toArray().size(), 3);
    QCOMPARE(results[u"steps"_s].toArray().size(), 3);
    QCOMPARE(results[u"steps"_s].toArray()[1].toObject()[u"used"_s].toString(), u"kernel"_s);
    QVERIFY(results[u"device"_s].toObject()[u"sm_count"_s].toInt() > 0);

    // The loop: its body once (stop.3 clears the predicate), the same sum; a loop that never
    // clears it stops at the jump's limit with an error naming the step.
    const QString loopDir = writePlanDir(u"gpu_loop"_s, loopPlan());
    const QString loopOut = m_dir.filePath(u"gpu_loop_out"_s);
    r = runRunner({loopDir, u"--output"_s, loopOut, u"--quiet"_s});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QFile loopSum(loopOut + u"/outputs/0.bin"_s);
    QVERIFY(loopSum.open(QIODevice::ReadOnly));
    QCOMPARE(loopSum.readAll(), bytes);
    QFile cleared(loopOut + u"/outputs/1.bin"_s);
    QVERIFY(cleared.open(QIODevice::ReadOnly));
    QCOMPARE(cleared.readAll(), QByteArray(16, '\0'));
    QFile loopResults(loopOut + u"/results.json"_s);
    QVERIFY(loopResults.open(QIODevice::ReadOnly));
    const QJsonArray loopSteps =
        QJsonDocument::fromJson(loopResults.readAll()).object()[u"steps"_s].toArray();
    QCOMPARE(loopSteps.size(), 6);
    QCOMPARE(loopSteps[4].toObject()[u"iterations"_s].toInt(), 1);
    r = runRunner({writePlanDir(u"gpu_runaway"_s, loopPlan(true)), u"--quiet"_s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(u"steps[3] (loop.back): the loop did not end after 10 iterations"_s),
             qPrintable(r.err));

    // The conditional takes its true branch: the sum, not the false branch's zeros.
    const QString switchOut = m_dir.filePath(u"gpu_switch_out"_s);
    r = runRunner(
        {writePlanDir(u"gpu_switch"_s, switchPlan()), u"--output"_s, switchOut, u"--quiet"_s});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QFile chosen(switchOut + u"/outputs/0.bin"_s);
    QVERIFY(chosen.open(QIODevice::ReadOnly));
    QCOMPARE(chosen.readAll(), bytes);
}

QTEST_GUILESS_MAIN(TestGpuRunner)
#include "tst_gpu_runner.moc"
