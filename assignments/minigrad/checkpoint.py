"""Checkpoint quiz: work each answer out by hand, then check it with minigrad if you like.

Replace each question's two stub lines with one assignment, e.g. `Q1_DF_DA = 3.5`.
Numbers may be int or float; multiple-choice answers are one capital letter, e.g. "A".
The public checks only say whether each answer is filled in and well formed; the hidden
suite grades the values. Each question is loaded on its own, so an unanswered one costs
only its own points.
"""

# The answer names and their kinds, so a check can tell a missing answer from a wrong one.
QUESTIONS = {
    "Q1_DF_DA": "number",
    "Q2_DF_DB": "number",
    "Q3_DZ_DX": "number",
    "Q4_GRAD_AFTER_TWO_BACKWARDS": "number",
    "Q5_DO_DN": "number",
    "Q6_SIGMOID_SLOPE_AT_0": "number",
    "Q7_WHY_PLUS_EQUALS": "ABCD",
    "Q8_BACKWARD_ORDER": "ABCD",
    "Q9_FORGOT_ZERO_GRAD": "ABCD",
    # Part 4, the Tensor engine:
    "Q10_BIAS_GRAD": "number",
    "Q11_SUBTRACT_THE_MAX": "ABCD",
    "Q12_MOMENTUM_STEP": "number",
}

# Q1. f = (a*b + c)**2 with a = 3, b = -2, c = 4. What is df/da?
# YOUR CODE HERE
raise NotImplementedError()

# Q2. Same f and inputs. What is df/db?
# YOUR CODE HERE
raise NotImplementedError()

# Q3. z = x*y + x with x = -1, y = 4. What is dz/dx? (x reaches z along two paths.)
# YOUR CODE HERE
raise NotImplementedError()

# Q4. Build Q1's f, then call f.backward() twice without zeroing anything. What is a.grad?
# YOUR CODE HERE
raise NotImplementedError()

# Q5. o = n.tanh() with n = 0.6931471805599453 (that is ln 2), so o = 0.6. What is do/dn?
# YOUR CODE HERE
raise NotImplementedError()

# Q6. s = x.sigmoid() at x = 0. What is ds/dx?
# YOUR CODE HERE
raise NotImplementedError()

# Q7. Why does `_backward` write `self.grad += ...` rather than `self.grad = ...`?
#   A. `+=` is faster than `=` for floats.
#   B. A value can feed several later nodes; each path adds its own share of the gradient.
#   C. It resets the gradient before each pass.
#   D. Python closures cannot assign to attributes.
# YOUR CODE HERE
raise NotImplementedError()

# Q8. In which order does `backward()` run the nodes' `_backward` closures?
#   A. Inputs first, in topological order.
#   B. Any order: the sums come out the same.
#   C. Output first, in reverse topological order, so a node's grad is complete before it is
#      passed on to its inputs.
#   D. Breadth-first from the leaves.
# YOUR CODE HERE
raise NotImplementedError()

# Q9. A training loop never zeroes the gradients. What happens?
#   A. Nothing: backward() overwrites them.
#   B. Each step follows the sum of all past gradients, so the updates drift and grow.
#   C. backward() raises an error on the second step.
#   D. The gradients are averaged over the steps.
# YOUR CODE HERE
raise NotImplementedError()

# Part 4 (lessons/04-tensor.md).

# Q10. A bias b of shape (3,) is added to a batch x of shape (5, 3): out = x + b, and the
# loss is out.sum(). What is b.grad[0]?
# YOUR CODE HERE
raise NotImplementedError()

# Q11. Why does cross_entropy subtract each row's largest logit before taking exp?
#   A. It makes the loss smaller, so training converges faster.
#   B. It cancels out of the softmax, and keeps every e**(x - max) in (0, 1], so logits
#      like 1000 cannot overflow.
#   C. It sets the gradient of the largest logit to zero.
#   D. It scales the logits to unit variance, as batch normalization does.
# YOUR CODE HERE
raise NotImplementedError()

# Q12. SGD(params, lr=0.1, momentum=0.9), no weight decay. A parameter p = 1.0 gets the
# gradient 1.0 before each of two steps. What is p after the second step?
# YOUR CODE HERE
raise NotImplementedError()
