"""Learning-rate schedulers driving an optimizer, stepped per batch and per epoch."""
import paddle
import paddle.optimizer.lr as lr

from _common import show


def trace(sched, steps, metric=None):
    out = []
    for i in range(steps):
        out.append(sched())
        if metric is None:
            sched.step()
        else:
            sched.step(metric[i])
    return out


show("cosine", trace(lr.CosineAnnealingDecay(0.1, T_max=5, eta_min=0.01), 8), rtol=1e-6)
show("warmup_cosine", trace(lr.LinearWarmup(lr.CosineAnnealingDecay(0.1, T_max=4), warmup_steps=3, start_lr=0.0,
                                            end_lr=0.1), 8), rtol=1e-6)
show("step", trace(lr.StepDecay(0.5, step_size=2, gamma=0.5), 6), rtol=1e-6)
show("multistep", trace(lr.MultiStepDecay(0.5, milestones=[2, 5], gamma=0.1), 7), rtol=1e-6)
show("exponential", trace(lr.ExponentialDecay(1.0, gamma=0.9), 4), rtol=1e-6)
show("natural_exp", trace(lr.NaturalExpDecay(1.0, gamma=0.5), 4), rtol=1e-6)
show("inverse_time", trace(lr.InverseTimeDecay(1.0, gamma=0.5), 4), rtol=1e-6)
show("polynomial", trace(lr.PolynomialDecay(1.0, decay_steps=4, end_lr=0.1, power=2.0), 6), rtol=1e-6)
show("polynomial_cycle", trace(lr.PolynomialDecay(1.0, decay_steps=2, end_lr=0.1, cycle=True), 6), rtol=1e-6)
show("noam", trace(lr.NoamDecay(d_model=16, warmup_steps=3, learning_rate=1.0), 6), rtol=1e-6)
show("lambda", trace(lr.LambdaDecay(0.5, lr_lambda=lambda e: 0.9 ** e), 4), rtol=1e-6)
show("multiplicative", trace(lr.MultiplicativeDecay(0.5, lr_lambda=lambda e: 0.5), 4), rtol=1e-6)
show("onecycle", trace(lr.OneCycleLR(max_learning_rate=1.0, total_steps=8), 8), rtol=1e-5)
show("cyclic", trace(lr.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=2), 7), rtol=1e-6)
show("plateau", trace(lr.ReduceOnPlateau(1.0, patience=1, factor=0.5), 7, metric=[5, 4, 4, 4, 4, 3, 3]),
     rtol=1e-6)

w = paddle.create_parameter([2], "float32", default_initializer=paddle.nn.initializer.Constant(1.0))
sched = lr.StepDecay(0.1, step_size=1, gamma=0.5)
opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[w])
for _ in range(3):
    (w * w).sum().backward()
    opt.step()
    opt.clear_grad()
    sched.step()
show("sgd_with_schedule", w, rtol=1e-6)
show("state", [str(sched.state_dict()["last_epoch"]), f"{sched.state_dict()['last_lr']:.6g}"])
