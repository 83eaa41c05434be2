//! Adam (Kingma and Ba 2015) over one flat parameter vector, with the weight clipping quantisation
//! needs.

pub struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
}

impl Adam {
    pub fn new(params: usize) -> Adam {
        Adam {
            m: vec![0.0; params],
            v: vec![0.0; params],
            t: 0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }

    /// One step of size `lr` against `grad`; parameters are kept within ±`clip`.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], lr: f32, clip: f32) {
        self.t += 1;
        let c1 = 1.0 - self.beta1.powi(self.t);
        let c2 = 1.0 - self.beta2.powi(self.t);
        let (b1, b2, eps) = (self.beta1, self.beta2, self.eps);
        for (((p, g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(self.m.iter_mut())
            .zip(self.v.iter_mut())
        {
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            let step = lr * (*m / c1) / ((*v / c2).sqrt() + eps);
            *p = (*p - step).clamp(-clip, clip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_minimises_a_quadratic() {
        let mut p = vec![1.5f32, -1.0];
        let mut adam = Adam::new(2);
        for _ in 0..2000 {
            let g: Vec<f32> = p.iter().map(|x| 2.0 * (x - 0.25)).collect();
            adam.step(&mut p, &g, 0.01, 1.98);
        }
        assert!(p.iter().all(|x| (x - 0.25).abs() < 1e-3), "{p:?}");
    }
}
