[("W13 EP8", 64, False, [((32,64,3,None,None),1,True,16,True), ((32,64,2,None,None),2,True,16,True), ((32,64,4,None,None),1,True,16,True), ((32,64,3,None,None),1,True,16,False)]),
 ("W13 EP8", 48, False, [((32,64,3,None,None),1,True,16,True), ((32,64,2,None,None),2,True,16,True)]),
 ("W13 EP8", 80, False, [((32,64,3,None,None),1,True,16,True), ((32,64,2,None,None),2,True,16,True)]),
 ("W13 EP8, TP attention", 256, False, [((32,64,3,None,None),1,True,16,True), ((32,64,2,None,None),2,True,16,True)]),
 ("W13 EP8, TP attention", 192, False, [((32,64,3,None,None),1,True,16,True), ((32,64,2,None,None),2,True,16,True)]),
]
