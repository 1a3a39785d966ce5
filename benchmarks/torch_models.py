"""The benchmark models written with torch.nn: the same architectures as
oar's model zoo (ResNet18, MobileNetV2 in the torchvision/Paddle layout) and
the benchmarks' transformer blocks, so that each framework runs the same
arithmetic. Imported only by peer workers (needs torch)."""
import math


def build(torch):
    """Returns a namespace of model classes bound to `torch`."""
    nn, F = torch.nn, torch.nn.functional

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + idt)

    class ResNet18(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    def conv_bn_act(cin, cout, k=3, stride=1, groups=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU6())

    class Inverted(nn.Module):
        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hidden = int(round(cin * t))
            self.res = stride == 1 and cin == cout
            layers = [conv_bn_act(cin, hidden, 1)] if t != 1 else []
            layers += [conv_bn_act(hidden, hidden, 3, stride, hidden),
                       nn.Conv2d(hidden, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.res else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                        [6, 160, 3, 2], [6, 320, 1, 1]]
            feats, cin = [conv_bn_act(3, 32, stride=2)], 32
            for t, c, n, s in settings:
                for i in range(n):
                    feats.append(Inverted(cin, c, s if i == 0 else 1, t))
                    cin = c
            feats.append(conv_bn_act(cin, 1280, 1))
            self.features = nn.Sequential(*feats)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    class EncoderLayer(nn.Module):
        """Post-norm BERT layer: x = LN(x + attn(x)); x = LN(x + ffn(x))."""

        def __init__(self, w, h, ffn):
            super().__init__()
            self.qkv, self.proj = nn.Linear(w, 3 * w), nn.Linear(w, w)
            self.fc1, self.fc2 = nn.Linear(w, ffn), nn.Linear(ffn, w)
            self.ln1, self.ln2 = nn.LayerNorm(w, eps=1e-12), nn.LayerNorm(w, eps=1e-12)
            self.h = h

        def forward(self, x):
            b, s, w = x.shape
            q, k, v = self.qkv(x).split(w, dim=-1)
            q, k, v = [t.reshape(b, s, self.h, w // self.h).transpose(1, 2) for t in (q, k, v)]
            att = F.softmax(q @ k.transpose(-1, -2) * (1.0 / math.sqrt(w // self.h)), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, w)
            x = self.ln1(x + self.proj(y))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Encoder(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.tok, self.pos = nn.Embedding(c["vocab"], c["width"]), nn.Embedding(c["seq"], c["width"])
            self.ln = nn.LayerNorm(c["width"], eps=1e-12)
            self.layers = nn.ModuleList([EncoderLayer(c["width"], c["heads"], c["ffn"])
                                         for _ in range(c["layers"])])
            self.register_buffer("pos_ids", torch.arange(c["seq"]))

        def forward(self, ids):
            x = self.ln(self.tok(ids) + self.pos(self.pos_ids[: ids.shape[1]]))
            for layer in self.layers:
                x = layer(x)
            return x

    class GptBlock(nn.Module):
        def __init__(self, w, h):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(w), nn.LayerNorm(w)
            self.qkv, self.proj = nn.Linear(w, 3 * w), nn.Linear(w, w)
            self.fc1, self.fc2 = nn.Linear(w, 4 * w), nn.Linear(4 * w, w)
            self.h = h

        def forward(self, x, mask):
            b, s, w = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(w, dim=-1)
            q, k, v = [t.reshape(b, s, self.h, w // self.h).transpose(1, 2) for t in (q, k, v)]
            att = F.softmax(q @ k.transpose(-1, -2) * (1.0 / math.sqrt(w // self.h)) + mask, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, w)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Gpt(nn.Module):
        """The twin of paddle_models.gpt: a dict of vocab, width, layers, heads, seq."""

        def __init__(self, c):
            super().__init__()
            self.tok, self.pos = nn.Embedding(c["vocab"], c["width"]), nn.Embedding(c["seq"], c["width"])
            self.blocks = nn.ModuleList([GptBlock(c["width"], c["heads"]) for _ in range(c["layers"])])
            self.ln = nn.LayerNorm(c["width"])
            self.head = nn.Linear(c["width"], c["vocab"])
            self.register_buffer("mask", torch.triu(torch.full((c["seq"], c["seq"]), -1e9), 1))
            self.register_buffer("pos_ids", torch.arange(c["seq"]))

        def forward(self, ids):
            x = self.tok(ids) + self.pos(self.pos_ids)
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    class Models:
        pass

    m = Models()
    m.ResNet18, m.MobileNetV2, m.Encoder, m.Gpt = ResNet18, MobileNetV2, Encoder, Gpt
    return m
